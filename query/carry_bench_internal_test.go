package query

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/internal/dataset"
	"github.com/decoy-mock/decoy/jsondoc"
)

// BenchmarkSortedReadAfterWrite measures a write of one record to 100,000
// (an append, a delete, a replace changing the sorted value), what it
// carries over (CarryOver, as the cache calls it), then a sorted read: by
// the kept order (order) or by its ranks (ranks, a few matches). carried
// carries the order over the write; rebuilt builds it again, as before
// orders were carried over such writes (carryOrders unset).
func BenchmarkSortedReadAfterWrite(b *testing.B) {
	base, err := jsondoc.Parse(dataset.Users(100_000))
	if err != nil {
		b.Fatal(err)
	}
	for _, read := range []struct{ name, raw string }{
		{"order", "order_by=createdAt&order_direction=desc&limit=10"},
		{"ranks", "filters=status%3Dactive%26age%3D40&order_by=createdAt&limit=10"},
	} {
		q, err := Compile(ParseParams(read.raw))
		if err != nil {
			b.Fatal(err)
		}
		for _, op := range []jsondoc.EditOp{jsondoc.EditAppend, jsondoc.EditDelete, jsondoc.EditReplace} {
			for _, carry := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/%s", read.name, [...]string{"append", "replace", "delete"}[op], map[bool]string{true: "carried", false: "rebuilt"}[carry])
				b.Run(name, func(b *testing.B) {
					carryOrders = carry
					defer func() { carryOrders = true }()
					rng := rand.New(rand.NewPCG(1, 2))
					ed, _ := base.Editor(nil)
					ed.Replace(0, base.Record(0), true) // a document of its own, written to
					d := ed.Document()
					q.Run(d)
					sorts := orderBuilds.Load()
					for i := 0; b.Loop(); i++ {
						ed, _ := d.Editor(nil)
						rec := fmt.Appendf(nil, `{"id":%d,"status":"active","age":40,"createdAt":"2021-%02d-%02d"}`, 200_000+i, 1+rng.IntN(12), 1+rng.IntN(28))
						switch op {
						case jsondoc.EditAppend:
							ed.Append(rec, true)
						case jsondoc.EditDelete:
							ed.Delete(rng.IntN(ed.Len()))
						default:
							ed.Replace(rng.IntN(ed.Len()), rec, true)
						}
						d = ed.Document()
						d.CarryOver()
						if r := q.Run(d); len(r.Records) == 0 {
							b.Fatal("no records")
						}
					}
					b.ReportMetric(float64(orderBuilds.Load()-sorts)/float64(b.N), "sorts/op")
				})
			}
		}
	}
}

// BenchmarkCreateCarriesIDIndex measures creates of records with new ids
// in 100,000, each carrying the index of the id field over (CarryOver, as
// the cache calls it), as a collection's POSTs do: the worst write shows
// what the slowest create costs (under the mock's write lock, where every
// other writer waits).
func BenchmarkCreateCarriesIDIndex(b *testing.B) {
	base, err := jsondoc.Parse(dataset.Users(100_000))
	if err != nil {
		b.Fatal(err)
	}
	ed, _ := base.Editor(nil)
	ed.Replace(0, base.Record(0), true)
	d := ed.Document()
	path := jsondoc.NewPath([]string{"id"})
	equalityIndex(d, path, false)
	var worst time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		ed, _ := d.Editor(nil)
		ed.Append(fmt.Appendf(nil, `{"id":%d,"name":"n"}`, 200_000+i), true)
		d = ed.Document()
		d.CarryOver()
		worst = max(worst, time.Since(start))
	}
	if ix := equalityIndex(d, path, false); !ix.carried {
		b.Fatal("the index was built again, not carried")
	}
	b.ReportMetric(float64(worst.Microseconds()), "worst-µs")
}
