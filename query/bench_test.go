package query_test

import (
	"io"
	"testing"

	"github.com/decoy-mock/decoy/internal/dataset"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

// benchQueries are the read-path queries of the benchmarks.
var benchQueries = []struct{ name, raw string }{
	{"filter+order+limit", "filters=status%5B%24eqi%5D%3Dactive&order_by=age&order_direction=desc&limit=10"},
	{"nested-equality", "filters=address.city%3DParis"},
	{"order+limit", "order_by=createdAt&limit=100"},
	{"fan-out", "filters=tags%3Dvip&limit=10"},
}

// BenchmarkRun measures the engine on 10,000 records, with the document's
// columns built (as after the first query on a path), writing the answer.
func BenchmarkRun(b *testing.B) {
	d, err := jsondoc.Parse(dataset.Users(10000))
	if err != nil {
		b.Fatal(err)
	}
	for _, bq := range benchQueries {
		q, err := query.Compile(query.ParseParams(bq.raw))
		if err != nil {
			b.Fatal(err)
		}
		q.Run(d) // build the columns
		b.Run(bq.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := q.Run(d)
				for _, i := range r.Records {
					io.Discard.Write(d.Record(int(i)))
				}
			}
		})
	}
}

// BenchmarkColumn measures the first query on a path: building its column.
func BenchmarkColumn(b *testing.B) {
	d, err := jsondoc.Parse(dataset.Users(10000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		// A new document each time, so that nothing is cached.
		fresh, _ := jsondoc.Parse(d.Bytes())
		fresh.Column(jsondoc.NewPath([]string{"address", "city"}))
	}
}

// BenchmarkParse measures validating a 10,000-record document once.
func BenchmarkParse(b *testing.B) {
	doc := dataset.Users(10000)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsondoc.Parse(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstQuery measures what the first query on a path costs beyond
// its column: building the equality index or the sort order that later
// queries on the path reuse.
func BenchmarkFirstQuery(b *testing.B) {
	doc := dataset.Users(10000)
	for _, bq := range []struct{ name, raw string }{
		{"equality-index", "filters=address.city%3DParis"},
		{"folded-index", "filters=status%5B%24eqi%5D%3Dactive"},
		{"sort-order", "order_by=createdAt&limit=100"},
	} {
		q, err := query.Compile(query.ParseParams(bq.raw))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bq.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				d, _ := jsondoc.Parse(doc) // nothing cached
				for _, c := range q.Filters {
					d.Column(jsondoc.NewPath(c.Path))
				}
				if q.OrderBy != nil {
					d.Column(jsondoc.NewPath(q.OrderBy))
				}
				b.StartTimer()
				q.Run(d)
			}
		})
	}
}
