package jsondoc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
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

// An edit dropped uncommitted gives its room back: the next edit of the
// document before it extends the same arena in place, rather than copying
// the whole text (each PATCH whose client left did, under load).
func TestAbandon(t *testing.T) {
	d, err := Parse([]byte(`[{"id":0},{"id":1},{"id":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(d *Document, rec string) *Document {
		ed, _ := d.Editor(nil)
		ed.Replace(1, []byte(rec), true)
		return ed.Document()
	}
	shares := func(a, b *Document) bool { return unsafe.SliceData(a.raw) == unsafe.SliceData(b.raw) }
	base := edit(d, `{"id":1,"v":0}`) // an edited document: its text is in an arena
	for i := range 3 {
		dropped := edit(base, fmt.Sprintf(`{"id":1,"v":%d}`, 10+i))
		if !shares(dropped, base) {
			t.Fatalf("edit %d: copied the arena before any edit was dropped", i)
		}
		dropped.Abandon(base)
	}
	next := edit(base, `{"id":1,"v":"kept"}`)
	if !shares(next, base) {
		t.Fatal("the edit after three dropped ones copied the whole text")
	}
	if got := string(next.Whole()); got != `[{"id":0},{"id":1,"v":"kept"},{"id":2}]` {
		t.Errorf("after dropped edits: %s", got)
	}
	if got := string(base.Whole()); got != `[{"id":0},{"id":1,"v":0},{"id":2}]` {
		t.Errorf("the document before: %s", got)
	}
	// Once the arena moved on past d, abandoning an older edit changes
	// nothing: the newer state keeps its text.
	stale := edit(next, `{"id":1,"v":"stale"}`)
	newer := edit(stale, `{"id":1,"v":"newer"}`)
	stale.Abandon(next)
	if got := string(newer.Whole()); got != `[{"id":0},{"id":1,"v":"newer"},{"id":2}]` {
		t.Errorf("a state after the abandoned one: %s", got)
	}
	if after := edit(newer, `{"id":1,"v":"after"}`); !shares(after, newer) || string(newer.Whole()) != `[{"id":0},{"id":1,"v":"newer"},{"id":2}]` {
		t.Errorf("the arena after a stale abandon: %s", newer.Whole())
	}
	// A first edit's text is a new arena: abandoning it leaves the parsed
	// document alone.
	first := edit(d, `{"id":1,"v":"first"}`)
	first.Abandon(d)
	if got := string(d.Whole()); got != `[{"id":0},{"id":1},{"id":2}]` {
		t.Errorf("the parsed document: %s", got)
	}
}

// A document an Editor was made from is not abandoned: a state made from
// it may share its text (a delete does), and giving its room back would
// let the next edit write over that state's records (found by a review;
// the write path never does it).
func TestAbandonAfterEdit(t *testing.T) {
	d, _ := Parse([]byte(`[{"id":0},{"id":1},{"id":2}]`))
	ed, _ := d.Editor(nil)
	ed.Replace(0, []byte(`{"id":0,"v":0}`), true)
	prev := ed.Document()
	ed, _ = prev.Editor(nil)
	ed.Replace(1, []byte(`{"id":1,"v":"mine"}`), true)
	mid := ed.Document()
	ed, _ = mid.Editor(nil)
	ed.Delete(2)
	later := ed.Document() // shares mid's text
	// Not Whole: it keeps the text it made.
	text := func() string { return string(later.live.assemble(later.raw)) }
	want := text()
	mid.Abandon(prev)
	ed, _ = prev.Editor(nil)
	ed.Replace(1, []byte(`{"id":1,"v":"XXXX"}`), true)
	ed.Document()
	if got := text(); got != want {
		t.Errorf("the state made from the abandoned one changed: %s, want %s", got, want)
	}
}
