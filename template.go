package decoy

import "context"

// This file is the vocabulary of generated data (§7 of the contract): a
// mock's data may come from a template, run once into the mock's data or
// afresh on every read.

// Template modes.
const (
	// TemplateOnce: the template ran once and its output is the mock's
	// data, until it is run again (regenerated).
	TemplateOnce = "once"
	// TemplateAlways: every read runs the template afresh; the stored
	// data is not served.
	TemplateAlways = "always"
)

// Template is the template of a mock: a JSON template, or a JSON Schema
// when ContentType is application/schema+json.
type Template struct {
	Mode        string
	ContentType string
	Body        []byte
}

// TemplateStore keeps the templates of mocks. A mock's template mode is
// also in Mock.TemplateMode, so that a read knows it without asking; a
// change of template is a change of the mock (its Version and UpdatedAt
// move on), so that every replica's cached copy is replaced.
type TemplateStore interface {
	// SetTemplate stores the template of mock id, replacing any, and
	// returns the mock. Returns ENOTFOUND.
	SetTemplate(ctx context.Context, id string, t Template) (*Mock, error)

	// FindTemplate returns the template of mock id. Returns ENOTFOUND
	// when the mock does not exist or has no template.
	FindTemplate(ctx context.Context, id string) (*Template, error)

	// DeleteTemplate removes the template of mock id; its data stays.
	// Returns the mock, and ENOTFOUND when the mock does not exist or has
	// no template.
	DeleteTemplate(ctx context.Context, id string) (*Mock, error)
}
