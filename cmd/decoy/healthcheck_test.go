package main

import "testing"

func TestHealthURL(t *testing.T) {
	for _, tt := range []struct {
		addr  string
		https bool
		want  string
	}{
		{"127.0.0.1:8080", false, "http://127.0.0.1:8080/healthz"},
		{"0.0.0.0:8080", false, "http://127.0.0.1:8080/healthz"},
		{":8080", true, "https://127.0.0.1:8080/healthz"},
		{"[::]:9000", false, "http://[::1]:9000/healthz"},
		{"decoy.internal:8080", true, "https://decoy.internal:8080/healthz"},
	} {
		if got, err := healthURL(tt.addr, tt.https); err != nil || got != tt.want {
			t.Errorf("healthURL(%q, %v) = %q, %v; want %q", tt.addr, tt.https, got, err, tt.want)
		}
	}
	if _, err := healthURL("8080", false); err == nil {
		t.Error("healthURL(\"8080\") gave no error")
	}
}
