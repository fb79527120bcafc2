package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
)

// FuzzHandler sends arbitrary methods, paths, query strings and token
// headers to the whole server: no answer is a 5xx, and every error is JSON.
func FuzzHandler(f *testing.F) {
	h := servertest.New(f)
	open := h.Create(`[{"a":{"b":[1,"x",null]}},{"a":2},"s"]`, client.CreateOptions{})
	priv := h.Create(`[{"a":1}]`, client.CreateOptions{Private: true})
	f.Add("GET", "/mock/"+open.ID, "filters=a.b%3D1&order_by=a&limit=1", "")
	f.Add("GET", "/api/"+priv.ID, "auth_token="+priv.Token, "x")
	f.Add("HEAD", "/mock/"+strings.ToUpper(open.ID), "offset=1&order_direction=DESC", "")
	f.Add("DELETE", "/mock/../admin/v1/mocks", "", "")
	f.Add("GET", "/admin/v1/mocks/"+open.ID+"/usage", "", "")
	f.Add("OPTIONS", "/mock/\x00", "%zz=%00&filters=%", "\xff")
	f.Fuzz(func(t *testing.T, method, path, rawQuery, token string) {
		if !validMethod(method) {
			return // net/http refuses these before any handler runs
		}
		req := &http.Request{
			Method:     method,
			URL:        &url.URL{Path: path, RawQuery: rawQuery},
			Header:     http.Header{},
			RemoteAddr: "192.0.2.1:1234",
			Host:       "decoy.test",
		}
		if token != "" {
			req.Header.Set("serviceauthtoken", token)
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		rec := httptest.NewRecorder()
		h.Srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q ?%q: %d %s", method, path, rawQuery, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && method != http.MethodHead {
			var e struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("%s %q: %d answer is not a JSON error: %q", method, path, rec.Code, rec.Body)
			}
		}
	})
}

// validMethod reports whether m is an HTTP token, as net/http requires.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range m {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, c) {
			return false
		}
	}
	return true
}
