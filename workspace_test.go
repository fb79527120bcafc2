package decoy

import "testing"

func TestDefaultIDs(t *testing.T) {
	if got := SeedID("decoy:workspace:default"); got != DefaultWorkspaceID {
		t.Errorf("DefaultWorkspaceID = %s, want %s", DefaultWorkspaceID, got)
	}
	if got := SeedID("decoy:project:default"); got != DefaultProjectID {
		t.Errorf("DefaultProjectID = %s, want %s", DefaultProjectID, got)
	}
}
