/**
 * One table of consumers and how far behind they are, for a stream's consumer groups (a position
 * per partition) and a subscription's subscribers (one cursor each): a row per consumer, a cell
 * per position with the position and its lag, and the consumer's last activity.
 */
import { ago, when } from './ui';

export interface LagRow {
  id: string;
  /** One per column: the consumer's position there (null: none yet) and the messages behind. */
  cells: { position: number | null; lag: number }[];
  /** Its last commit or consume. */
  last: string | null;
}

export function LagTable(props: {
  /** Row header: `Group` or `Subscriber`. */
  who: string;
  /** What a position is called: `committed` (offset) or `cursor`. */
  position: string;
  /** A header per position column. */
  columns: string[];
  rows: LagRow[];
  lastLabel: string;
  caption?: string;
  /** Shown instead of an empty table. */
  empty: string;
  /** More rows exist than shown. */
  more?: boolean;
  testIdPrefix: string;
}) {
  if (props.rows.length === 0) return <p>{props.empty}</p>;
  return (
    <>
      <table>
        {props.caption && <caption>{props.caption}</caption>}
        <thead>
          <tr>
            <th scope="col">{props.who}</th>
            {props.columns.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
            <th scope="col">{props.lastLabel}</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr key={r.id} data-testid={`${props.testIdPrefix}-${r.id}`}>
              <th scope="row">{r.id}</th>
              {r.cells.map((c, i) => (
                <td key={i}>
                  {props.position} {c.position ?? 'none'}, lag <strong>{c.lag}</strong>
                </td>
              ))}
              <td>
                {when(r.last)}
                {r.last ? ` (${ago(r.last)})` : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.more && <p>More {props.who.toLowerCase()}s exist than shown.</p>}
    </>
  );
}
