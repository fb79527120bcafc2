package jsondoc

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Random edits of random published states, half of them abandoned: every
// published state keeps its text.
func TestAbandonRandom(t *testing.T) {
	for seed := range 60 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		d, err := Parse([]byte(`[{"id":0},{"id":1},{"id":2}]`))
		if err != nil {
			t.Fatal(err)
		}
		type st struct {
			d    *Document
			want string
		}
		pub := []st{{d, string(d.Whole())}}
		for step := range 200 {
			// mostly the newest, sometimes an older one
			i := len(pub) - 1
			if r.IntN(4) == 0 {
				i = r.IntN(len(pub))
			}
			s := pub[i]
			ed, _ := s.d.Editor(nil)
			n := ed.Len()
			switch op := r.IntN(3); {
			case op == 0 || n == 0:
				ed.Append([]byte(fmt.Sprintf(`{"id":"a%d-%d"}`, seed, step)), true)
			case op == 1:
				ed.Replace(r.IntN(n), []byte(fmt.Sprintf(`{"id":"r%d-%d","pad":"%0*d"}`, seed, step, r.IntN(50), 0)), true)
			default:
				ed.Delete(r.IntN(n))
			}
			nd := ed.Document()
			if r.IntN(2) == 0 {
				nd.Abandon(s.d)
			} else {
				pub = append(pub, st{nd, string(nd.live.assemble(nd.raw))})
			}
			for k, p := range pub {
				got := string(p.d.raw)
				if p.d.live != nil {
					got = string(p.d.live.assemble(p.d.raw))
				}
				if got != p.want {
					t.Fatalf("seed %d step %d: state %d changed:\n got %s\nwant %s", seed, step, k, got, p.want)
				}
			}
		}
	}
}
