package admin

import (
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
)

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
		if err := parseBody(body, &key, "name"); err != nil && answer.StatusOf(decoy.ErrorCode(err)) != 400 {
			t.Fatalf("refused with %v", err)
		}
		var ws struct {
			Name   *string         `json:"name"`
			Limits *map[string]any `json:"limits"`
		}
		if err := parseBody(body, &ws, "name"); err != nil && answer.StatusOf(decoy.ErrorCode(err)) != 400 {
			t.Fatalf("refused with %v", err)
		}
	})
}
