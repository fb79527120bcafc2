package jsondoc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Edits over chunked spans give what the same edits give over one chunk:
// the same records and the same whole text, through appends, replaces
// and deletes at chunk boundaries, and chunks emptied.
func TestEditorChunks(t *testing.T) {
	old := chunkMax
	t.Cleanup(func() { chunkMax = old })
	data := []byte("[\n  {\"id\":0},\n  {\"id\":1}, {\"id\":2},{\"id\":3}\n ,{\"id\":4}\n]\n")
	for _, size := range []int{1, 2, 3, 5} {
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, uint64(size)))
			type op struct {
				kind, at int
				rec      []byte
			}
			var ops []op
			n := 5
			for k := range 60 {
				o := op{kind: rng.IntN(3), rec: fmt.Appendf(nil, `{"id":%d}`, 100+k)}
				if n == 0 {
					o.kind = 0
				}
				if o.kind > 0 {
					o.at = rng.IntN(n)
				}
				switch o.kind {
				case 0:
					n++
				case 2:
					n--
				}
				ops = append(ops, o)
			}
			run := func(chunk int) *Document {
				chunkMax = chunk
				d, err := Parse(bytes.Clone(data))
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range ops {
					ed, _ := d.Editor(nil)
					switch o.kind {
					case 0:
						ed.Append(o.rec, true)
					case 1:
						ed.Replace(o.at, o.rec, true)
					default:
						ed.Delete(o.at)
					}
					d = ed.Document()
				}
				return d
			}
			want, got := run(1024), run(size)
			if !bytes.Equal(got.Whole(), want.Whole()) {
				t.Fatalf("chunks of %d, seed %d: %s\nwant %s", size, seed, got.Whole(), want.Whole())
			}
			if got.Len() != want.Len() || got.Size() != int64(len(want.Whole())) {
				t.Fatalf("chunks of %d: len %d size %d, want %d %d", size, got.Len(), got.Size(), want.Len(), len(want.Whole()))
			}
			for i := range got.Len() {
				if !bytes.Equal(got.Record(i), want.Record(i)) {
					t.Fatalf("chunks of %d: record %d %s, want %s", size, i, got.Record(i), want.Record(i))
				}
			}
			if p, err := Parse(got.Whole()); err != nil || p.Len() != got.Len() {
				t.Fatalf("whole text does not parse back: %v", err)
			}
		}
	}
}
