/**
 * The overview's revenue (docs/analytics.md): `revenueAnalytics` for the twelve months up to the chosen one (this
 * month by default; `#/?to=yyyy-mm` picks another) in one currency (CLP unless the member picks another of the
 * currencies, by its ISO code), drawn as four charts (MRR and its movements, invoiced and collected, outstanding and
 * overdue, IVA) with the same numbers in a table beneath. The charts' code (uPlot) is loaded only here.
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { formatMoney } from "../../shared/format.js";
import type { Chart as ChartComponent, ChartSeries } from "./charts.js";
import { nodes, Pending, Section, Table, usePage, type Currency, type Edges } from "./ui.js";

/** The amounts of a month the page shows, in the order of its table. */
const FIGURES = [
  "mrr",
  "newMrr",
  "expansionMrr",
  "contractionMrr",
  "churnedMrr",
  "invoiced",
  "collected",
  "outstanding",
  "overdue",
  "iva",
] as const;
type Figure = (typeof FIGURES)[number];
type Month = { month: string } & Record<Figure, string>;

const REVENUE = gql`
  query DashboardRevenue($currency: String!, $from: Date!, $to: Date!) {
    revenueAnalytics(currency: $currency, from: $from, to: $to, interval: month) {
      currency
      months { month mrr newMrr expansionMrr contractionMrr churnedMrr invoiced collected outstanding overdue iva }
    }
    currencies(first: 1, id: { equals: $currency }) { edges { node { id decimals } } }
  }
`;

/** The twelve months up to `to` (yyyy-mm): the first day of the eleventh month before it, and `to`'s last day. */
function range(to: string): { from: string; to: string } {
  const [y, m] = to.split("-").map(Number);
  const first = new Date(Date.UTC(y, m - 12, 1));
  const last = new Date(Date.UTC(y, m, 0));
  return { from: first.toISOString().slice(0, 10), to: last.toISOString().slice(0, 10) };
}

/** This month (yyyy-mm) as the browser's clock reads it in UTC. */
const thisMonth = () => new Date().toISOString().slice(0, 7);

/** The series of a chart: which figures, in which colours, as bars or lines. */
const CHARTS: { key: string; figures: Figure[]; bars?: boolean }[] = [
  { key: "mrrChart", figures: ["mrr", "newMrr", "expansionMrr", "contractionMrr", "churnedMrr"] },
  { key: "invoicedChart", figures: ["invoiced", "collected"] },
  { key: "balanceChart", figures: ["outstanding", "overdue"] },
  { key: "ivaChart", figures: ["iva"], bars: true },
];
const COLORS = ["#1d4ed8", "#15803d", "#0e7490", "#b45309", "#b91c1c"];

/** The twelve months' figures as charts (once their code has loaded) and as a table. */
export function Revenue({ to: chosen }: { to: string | null }) {
  const { t, locale } = usePage();
  const to = chosen && /^\d{4}-\d{2}$/.test(chosen) ? chosen : thisMonth();
  const [currency, setCurrency] = useState("CLP");
  const [{ data, error, fetching }] = useQuery<{
    revenueAnalytics: { currency: string; months: Month[] };
    currencies: Edges<Currency>;
  }>({ query: REVENUE, variables: { currency, ...range(to) } });
  const [Chart, setChart] = useState<typeof ChartComponent | null>(null);
  useEffect(() => {
    void import("./charts.js").then((m) => setChart(() => m.Chart));
  }, []);
  const currencies = nodes(data?.currencies);
  const unit = currencies.find((c) => c.id === currency) ?? { id: currency, decimals: 0 };
  const months = data?.revenueAnalytics.months;
  const money = (v: string) => formatMoney(v, unit.id, unit.decimals, locale);
  const axis = useMemo(() => (v: number) => formatMoney(String(Math.round(v)), unit.id, 0, locale), [unit.id, locale]);
  const monthName = (m: string) =>
    new Date(`${m}T12:00:00Z`).toLocaleDateString(locale === "es" ? "es-CL" : "en-US", {
      month: "short",
      year: "numeric",
      timeZone: "UTC",
    });
  const charts = useMemo(
    () =>
      (months ?? []).length === 0
        ? []
        : CHARTS.map((c) => ({
            key: c.key,
            series: c.figures.map((f, i): ChartSeries => ({
              label: t.figure[f],
              color: COLORS[i],
              bars: c.bars,
              values: months!.map((m) => Number(m[f])),
            })),
          })),
    [months, t],
  );
  return (
    <Section id="revenue" title={t.revenue}>
      <p class="filters">
        <label>
          {t.currency}
          <input
            value={currency}
            size={4}
            maxLength={3}
            pattern="[A-Za-z]{3}"
            onChange={(e) => {
              const code = e.currentTarget.value.trim().toUpperCase();
              if (/^[A-Z]{3}$/.test(code)) setCurrency(code);
            }}
          />
        </label>
        <span>{t.revenueRange(monthName(range(to).from), monthName(`${to}-01`))}</span>
      </p>
      {!months ? (
        <Pending fetching={fetching} error={error} />
      ) : (
        <>
          <div class="charts">
            {Chart &&
              charts.map((c) => (
                <Chart
                  key={`${c.key}-${currency}`}
                  title={t[c.key as "mrrChart"]}
                  months={months.map((m) => m.month)}
                  series={c.series}
                  format={axis}
                />
              ))}
          </div>
          <Table
            name="revenue"
            caption={t.revenueTable(currency)}
            columns={[{ label: t.month }, ...FIGURES.map((f) => ({ label: t.figure[f], num: true }))]}
            rows={months.map((m) => (
              <tr key={m.month} data-month={m.month}>
                <th scope="row" data-label={t.month}>
                  {monthName(m.month)}
                </th>
                {FIGURES.map((f) => (
                  <td key={f} class="num" data-label={t.figure[f]}>
                    {money(m[f])}
                  </td>
                ))}
              </tr>
            ))}
          />
        </>
      )}
    </Section>
  );
}
