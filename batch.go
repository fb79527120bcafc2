package decoy

import "context"

// MockBatchStore creates several mocks at once, all of them or none: an
// import (§8 of the contract) never leaves half of a file behind, even
// when the process stops midway. Both stores implement it; CreateMock is
// CreateMocks of one mock, so that every mock is created by one path.
type MockBatchStore interface {
	// CreateMocks stores new mocks with their data, each as CreateMock
	// does, in one transaction: when one cannot be stored, none is. An id
	// that is taken (or given twice) is ECONFLICT naming it. It returns the
	// mocks as stored, in order.
	CreateMocks(ctx context.Context, mocks []NewMock) ([]*Mock, error)
}

// NewMock is a mock to create, its data (see Store.CreateMock), and its
// template when it has one (see TemplateStore), stored with it.
type NewMock struct {
	Mock     *Mock
	Data     Data
	Template *Template
}
