package server

import (
	"testing"

	"github.com/decoy-mock/decoy"
)

// FuzzParsePHC parses arbitrary password hashes: it never panics, accepts
// only bounded parameters, and a hash it made parses back.
func FuzzParsePHC(f *testing.F) {
	f.Add(string(HashPassword("correct horse battery")))
	f.Add("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA")
	f.Add("$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdA$aGFzaA")
	f.Add("$argon2i$v=19$m=1,t=1,p=1$$")
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := parsePHC(s)
		if !ok {
			return
		}
		if p.memory > 1<<20 || p.time > 16 || p.threads > 16 || len(p.key) > 64 || len(p.salt) > 64 {
			t.Fatalf("unbounded parameters accepted: %q", s)
		}
	})
}

// FuzzParseBody decodes arbitrary bodies of the teams endpoints: it never
// panics, and what it refuses it refuses with a client error.
func FuzzParseBody(f *testing.F) {
	f.Add([]byte(`{"name":"k","role":"editor","project_id":null,"expires_at":"2030-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"limits":{"max_mocks":1,"max_bytes":null}}`))
	f.Add([]byte(`{"email":"a@b","password":"x"} {}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var key struct {
			Name      string  `json:"name"`
			Role      string  `json:"role"`
			ProjectID *string `json:"project_id"`
			ExpiresAt *string `json:"expires_at"`
		}
		if err := parseBody(body, &key, "name"); err != nil && statusOf[decoy.ErrorCode(err)] != 400 {
			t.Fatalf("refused with %v", err)
		}
		var ws struct {
			Name   *string         `json:"name"`
			Limits *map[string]any `json:"limits"`
		}
		if err := parseBody(body, &ws, "name"); err != nil && statusOf[decoy.ErrorCode(err)] != 400 {
			t.Fatalf("refused with %v", err)
		}
	})
}
