package server

import (
	"bytes"
	"context"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
)

// Seed stores data as the open JSON mock called name, under decoy.SeedID(name).
// A mock that exists keeps its settings, and its data is replaced only when
// it differs. It reports whether anything was written.
func (s *Server) Seed(ctx context.Context, name string, data []byte) (*decoy.Mock, bool, error) {
	id := decoy.SeedID(name)
	if int64(len(data)) > s.cfg.MaxDataBytes {
		return nil, false, decoy.Errorf(decoy.ETOOLARGE, "larger than %d bytes (--max-data-bytes)", s.cfg.MaxDataBytes)
	}
	m := &decoy.Mock{ID: id, Name: name, ContentType: "application/json", Status: 200, ETag: jsondoc.ETag(data)}
	e, err := mockcache.NewEntry(m, docfile.FromBytes(data))
	if err != nil {
		return nil, false, err
	}
	defer e.Release() // the cache takes its own
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	cur, stored, err := s.cfg.Store.FindMockData(ctx, id)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		var created *decoy.Mock
		gen := s.cache.Generation()
		created, err = s.cfg.Store.CreateMock(ctx, m, decoy.Data{Bytes: data})
		if err == nil {
			e.Mock = created
			s.cache.PutAt(e, gen)
			s.announce(ctx, id)
			return created, true, nil
		}
		if decoy.ErrorCode(err) != decoy.ECONFLICT {
			return nil, false, err
		}
		// Another replica seeding the same folder created it just now.
		cur, stored, err = s.cfg.Store.FindMockData(ctx, id)
	}
	if err != nil {
		return nil, false, err
	}
	same, err := sameData(stored, data)
	if err != nil {
		return nil, false, err
	}
	if same && cur.ContentType == m.ContentType {
		return cur, false, nil
	}
	gen := s.cache.Generation()
	updated, err := s.cfg.Store.ReplaceMockData(ctx, id, decoy.MockData{ContentType: m.ContentType, Data: decoy.Data{Bytes: data}, ETag: m.ETag})
	if err != nil {
		return nil, false, err
	}
	e.Mock = updated
	s.cache.PutAt(e, gen)
	s.announce(ctx, id)
	return updated, true, nil
}

// sameData reports whether the data a store returned holds b.
func sameData(stored decoy.Data, b []byte) (bool, error) {
	doc, err := mockcache.DocOf(stored)
	if err != nil {
		return false, err
	}
	defer doc.Release()
	return bytes.Equal(doc.Bytes(), b), nil
}
