/**
 * The revenue charts' drawing (uPlot on a canvas), loaded only when the overview shows them so the first page's
 * script stays small. uPlot sets sizes through the CSSOM (element.style), which the CSP's `style-src 'self'` allows;
 * its stylesheet is a file of this bundle.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

/** One drawn series: its label, colour, values (one per month) and whether it is drawn as bars. */
export interface ChartSeries {
  label: string;
  color: string;
  values: number[];
  bars?: boolean;
}

const bars = uPlot.paths.bars!({ size: [0.6, 60] });

/** A chart of monthly series over `months` (yyyy-mm-dd, the months' first days); `format` writes the value axis. */
export function Chart({
  title,
  months,
  series,
  format,
}: {
  title: string;
  months: string[];
  series: ChartSeries[];
  format: (value: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const size = () => ({ width: Math.max(280, el.clientWidth), height: 240 });
    const x = months.map((m) => Date.UTC(Number(m.slice(0, 4)), Number(m.slice(5, 7)) - 1, 1) / 1000);
    const plot = new uPlot(
      {
        ...size(),
        title,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "UTC"),
        scales: { x: { time: true } },
        axes: [{}, { size: 90, values: (_u, ticks) => ticks.map(format) }],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            fill: s.bars ? s.color : undefined,
            paths: s.bars ? bars : undefined,
            value: (_u: uPlot, v: number | null) => (v === null ? "—" : format(v)),
          })),
        ],
      },
      [x, ...series.map((s) => s.values)],
      el,
    );
    const resize = () => plot.setSize(size());
    addEventListener("resize", resize);
    return () => {
      removeEventListener("resize", resize);
      plot.destroy();
    };
  }, [title, months, series, format]);
  return <div class="chart" ref={box} />;
}
