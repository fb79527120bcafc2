package mockcache

import (
	"fmt"
	"strings"
	"testing"
)

// The compiled queries kept are bounded in number and length, and never
// hold a token.
func TestQueriesBounded(t *testing.T) {
	var c Queries
	for i := range 3 * maxCachedQueries {
		raw := fmt.Sprintf("limit=%d", i)
		if cq := c.Get(raw); cq.Err != nil || cq.Params.Limit != fmt.Sprint(i) {
			t.Fatalf("%s: %+v", raw, cq)
		}
		if n := len(c.m); n > maxCachedQueries {
			t.Fatalf("%d queries kept", n)
		}
	}
	long := "order_by=" + strings.Repeat("a", maxCachedQueryLen)
	if cq := c.Get(long); cq.Err != nil {
		t.Fatal(cq.Err)
	}
	if c.m[long] != nil {
		t.Error("kept a query string longer than maxCachedQueryLen")
	}
	c.Get("auth_token=secret")
	if c.m["auth_token=secret"] != nil {
		t.Error("kept a query string with a token")
	}
}
