package jsondoc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// A writer abandoning its edits while another goroutine publishes edits of
// the same states (a cache catching up): every published state keeps its
// text (from a review of Abandon; run it with -race).
func TestAbandonConcurrent(t *testing.T) {
	d, _ := Parse([]byte(`[{"id":0},{"id":1},{"id":2}]`))
	ed, _ := d.Editor(nil)
	ed.Replace(0, []byte(`{"id":0,"x":1}`), true)
	type st struct {
		d    *Document
		want string
	}
	first := ed.Document()
	var cur atomic.Pointer[st]
	cur.Store(&st{first, string(first.live.assemble(first.raw))})
	var mu sync.Mutex
	all := []*st{cur.Load()}
	var wg sync.WaitGroup
	stop := atomic.Bool{}
	wg.Add(2)
	go func() { // the writer: applies, then abandons
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			s := cur.Load()
			ed, _ := s.d.Editor(nil)
			if i%3 == 0 {
				ed.Delete(0)
			} else {
				ed.Append([]byte(fmt.Sprintf(`{"id":"w%d"}`, i)), true)
			}
			ed.Document().Abandon(s.d)
		}
	}()
	go func() { // catch-ups: publish edits of the current state
		defer wg.Done()
		for i := range 2000 {
			s := cur.Load()
			ed, _ := s.d.Editor(nil)
			switch {
			case i%5 == 0 && ed.Len() > 1:
				ed.Delete(ed.Len() - 1)
			case i%2 == 0:
				ed.Replace(0, []byte(fmt.Sprintf(`{"id":"r%d"}`, i)), true)
			default:
				ed.Append([]byte(fmt.Sprintf(`{"id":"c%d"}`, i)), true)
			}
			nd := ed.Document()
			ns := &st{nd, string(nd.live.assemble(nd.raw))}
			cur.Store(ns)
			mu.Lock()
			all = append(all, ns)
			mu.Unlock()
		}
		stop.Store(true)
	}()
	wg.Wait()
	for k, p := range all {
		if got := string(p.d.live.assemble(p.d.raw)); got != p.want {
			t.Fatalf("state %d changed:\n got %.200s\nwant %.200s", k, got, p.want)
		}
	}
}
