package decoy

// The workspace and project every server has from its first start (§6.1 of
// the contract). Mocks made before teams existed move there on upgrade, and
// a server admin who creates a mock without a project creates it there.
// Their ids are fixed, the UUIDv5 of "decoy:workspace:default" and
// "decoy:project:default" in the URL namespace, so that every store and
// every replica agrees on them without asking.
const (
	DefaultWorkspaceID = "2e6ecac9-ec3b-5885-a9fc-df77758708ee"
	DefaultProjectID   = "a46aab13-8714-5241-b061-dbe8a7f1fe99"
	// DefaultName is the name of the default workspace and of the project
	// every workspace is created with.
	DefaultName = "default"
)

// Actor is who made a change, as the audit log (§6.4) and the versions of a
// mock's data (§9) name it: Kind is "user", "key" or "server_admin"; ID and
// Label (an email, a key's name) are empty for the server admin, but for
// the server's own changes for a project (Label "recording"), and always
// written, as §6.4 shows them.
type Actor struct {
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Label string `json:"label"`
}

// ServerAdmin is the actor of the admin token.
var ServerAdmin = Actor{Kind: "server_admin"}
