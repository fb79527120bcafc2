package studio

import (
	"net/http/httptest"
	"testing"

	"github.com/decoy-mock/decoy"
)

// An embedded file that cannot be read is an internal error, returned for
// the server to log and answer (uncached), with nothing written; asked
// again, it fails again rather than being served empty.
func TestUnreadableAssetIsInternal(t *testing.T) {
	a := &assets{files: map[string]*asset{"gone-AAAAAAAA.js": {path: "dist/assets/gone-AAAAAAAA.js", contentType: "text/javascript", immutable: true}}}
	for range 2 {
		rec := httptest.NewRecorder()
		err := a.serveAsset(rec, httptest.NewRequest("GET", AssetPrefix+"gone-AAAAAAAA.js", nil), "gone-AAAAAAAA.js")
		if err == nil || decoy.ErrorCode(err) != decoy.EINTERNAL {
			t.Fatalf("err = %v, want an internal error", err)
		}
		if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
			t.Errorf("written before failing: %v %q", rec.Header(), rec.Body)
		}
	}
}
