package decoy

import (
	"context"
	"time"
)

// This file is the vocabulary of data versions (§9 of the contract): every
// write of a mock's data (an upload, a template run, an import, a restore)
// makes a new version and keeps the data it replaces, up to a number of
// versions per mock.

// DefaultMaxVersions is how many versions of its data a mock keeps, the
// current one included, unless configured otherwise (--max-versions).
const DefaultMaxVersions = 20

// Version is one kept version of a mock's data. Versions are numbered from
// 1, the data the mock was created with, and each write adds one.
type Version struct {
	Version int64 `json:"version"`
	// ContentType is the media type the data was stored with.
	ContentType string    `json:"-"`
	Size        int64     `json:"size"`
	ETag        string    `json:"etag"`
	CreatedAt   time.Time `json:"created_at"`
	// Actor is who wrote the data.
	Actor Actor `json:"actor"`
	// Current is set on the version that is the mock's data now: the
	// newest one.
	Current bool `json:"current"`
}

// VersionStore keeps the versions of mocks' data. Its store makes them: the
// mock's creation is version 1, and each ReplaceMockData adds one and
// forgets those past the store's bound, in the same write. The writer is
// the Actor of the write's context (see WithActor).
type VersionStore interface {
	// MockVersions returns the kept versions of a mock's data, newest
	// (the current data) first. Returns ENOTFOUND when there is no mock.
	MockVersions(ctx context.Context, id string) ([]Version, error)

	// FindVersionData returns one version of a mock's data and the data,
	// as FindMockData does. Returns ENOTFOUND when there is no mock
	// ("Mock api not found") or no such version kept ("Version not
	// found").
	FindVersionData(ctx context.Context, id string, version int64) (*Version, Data, error)

	// VersionBytes returns the bytes held by a mock's kept versions, the
	// current data included, so that the sum over a workspace's mocks is
	// all the data it stores. Returns ENOTFOUND when there is no mock.
	VersionBytes(ctx context.Context, id string) (int64, error)
}

// ErrVersionNotFound is the error of a version that is not kept.
func ErrVersionNotFound() error { return Errorf(ENOTFOUND, "Version not found") }

type actorKey struct{}

// WithActor returns ctx carrying the actor of the writes made with it: the
// store records it as the writer of the data versions they make.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries, or ServerAdmin when none: writes
// made by the server itself (a seed at start) are the administrator's.
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return ServerAdmin
}
