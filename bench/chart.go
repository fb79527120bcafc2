//go:build linux

package main

import (
	"bytes"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Fixed colours, so a server looks the same in every panel.
var serverColors = map[string]color.RGBA{
	"decoy":       {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"json-server": {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"mockoon":     {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"nginx":       {R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	"nethttp":     {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// drawChart draws, for each query, throughput and p99 latency against the
// dataset size, one line per server, on log-log axes; it writes base.svg
// and base.png.
func drawChart(r *report, base string) error {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	rows := make([][]*plot.Plot, len(queries))
	for i, q := range queries {
		rows[i] = []*plot.Plot{
			panel(r, q, q.Title+": throughput", "req/s", func(x *result) float64 { return x.ReqPerSec }, i == 0, false),
			panel(r, q, q.Title+": p99 latency", "p99", func(x *result) float64 { return x.P99 }, i == 0, true),
		}
	}
	w, h := 11*vg.Inch, 3.4*vg.Inch*vg.Length(len(queries))
	tiles := draw.Tiles{Rows: len(queries), Cols: 2, PadX: vg.Inch / 3, PadY: vg.Inch / 4,
		PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}

	svg := vgsvg.New(w, h)
	png := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110))}
	for _, c := range []vg.CanvasWriterTo{svg, png} {
		dc := draw.New(c)
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		canvases := plot.Align(rows, tiles, dc)
		for i := range rows {
			for j := range rows[i] {
				rows[i][j].Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := svg.WriteTo(&buf); err != nil {
		return err
	}
	// Liberation Sans has Arial's metrics: where it is not installed, Arial
	// keeps the layout the SVG was drawn with.
	out := bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	if err := os.WriteFile(base+".svg", out, 0o644); err != nil {
		return err
	}
	buf.Reset()
	if _, err := png.WriteTo(&buf); err != nil {
		return err
	}
	return os.WriteFile(base+".png", buf.Bytes(), 0o644)
}

// panel is one query's metric against dataset size. Servers that failed at
// a size have no point there.
func panel(r *report, q query, title, ylabel string, metric func(*result) float64, legend, legendLeft bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "records"
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, legendLeft
	p.Legend.TextStyle.Font.Size = vg.Points(9)

	lo, hi, any := 0.0, 0.0, false
	for _, s := range serverNames {
		var pts plotter.XYs
		for _, sz := range r.Config.Sizes {
			x := r.find(sz, s, q.ID)
			if !x.measured() || metric(x) <= 0 {
				continue
			}
			v := metric(x)
			pts = append(pts, plotter.XY{X: float64(sz.N), Y: v})
			if !any || v < lo {
				lo = v
			}
			if !any || v > hi {
				hi = v
			}
			any = true
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			continue
		}
		c := serverColors[s]
		line.Color, line.Width = c, vg.Points(1.5)
		points.Color, points.Shape, points.Radius = c, draw.CircleGlyph{}, vg.Points(2.5)
		p.Add(line, points)
		if legend {
			p.Legend.Add(displayNames[s], line, points)
		}
	}
	if !any {
		return p
	}
	var ns []float64
	for _, sz := range r.Config.Sizes {
		ns = append(ns, float64(sz.N))
	}
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = sizeTicks(ns)
	p.Y.Tick.Marker = powerTicks{ms: ylabel == "p99"}
	p.X.Min, p.X.Max = minOf(ns)/1.5, maxOf(ns)*1.5
	// Room above the lines for the legend, and a range even for one value.
	p.Y.Min, p.Y.Max = lo/2, hi*8
	return p
}

// sizeTicks labels the dataset sizes themselves (1k, 10k, ...).
type sizeTicks []float64

func (t sizeTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, n := range t {
		if n >= min && n <= max {
			ticks = append(ticks, plot.Tick{Value: n, Label: sizeLabel(int(n))})
		}
	}
	return ticks
}

// powerTicks marks the powers of ten, labelled 1k, 10k for rates and
// 1 ms, 1 s for latencies (values in ms).
type powerTicks struct{ ms bool }

func (t powerTicks) Ticks(lo, hi float64) []plot.Tick {
	// Over a narrow range, 2 and 5 get labels too.
	labelled := map[float64]bool{1: true}
	if math.Log10(hi/lo) < 2.5 {
		labelled[2], labelled[5] = true, true
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			if x := v * m; x >= lo && x <= hi {
				tick := plot.Tick{Value: x}
				if labelled[m] {
					tick.Label = t.label(x)
				}
				ticks = append(ticks, tick)
			}
		}
	}
	return ticks
}

func (t powerTicks) label(v float64) string {
	if t.ms {
		if v >= 1000 {
			return strconv.FormatFloat(v/1000, 'g', -1, 64) + " s"
		}
		return strconv.FormatFloat(v, 'g', -1, 64) + " ms"
	}
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
