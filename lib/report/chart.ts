/**
 * What a workload's chart draws, declared by the workload as its `chart` (lib/workloads/workload.ts:
 * `TABLE_CHART`, `SCALING_CHART`, ...) and rendered by lib/report/plot.ts: the x column, the
 * measures drawn on y (each a column or a sum of columns), the series key, the facets and the
 * units in the axis titles. The title names the workload the chart belongs to.
 * @module
 */

/** One measure drawn on y: the sum of `columns` of a row (one column, or user + system CPU). */
export interface ChartMeasure {
  /** Its name in a facet's header and in the data (`write`, `wall`, `CPU`). */
  readonly name: string;
  /** The columns summed, all in the unit of the y axis. */
  readonly columns: readonly string[];
  /**
   * A baseline's column in the same unit (`fio_write_MiBps` of `--baseline fio`): drawn per x as
   * a dashed black line named `label` in a legend, where rows hold it.
   */
  readonly baseline?: { readonly column: string; readonly label: string };
}

/** A facet of the chart: one panel per value of a row column or of the measure. */
export interface ChartFacet {
  /** `measure` (the measure's name) or a column of the rows. */
  readonly field: string;
  /** The facet's header (null: none). */
  readonly title: string | null;
  /** The panels' order by value; without it, ordered by `sortBy`. */
  readonly order?: readonly string[];
  /** A numeric column whose value orders the panels (e.g. size_bytes for sizes). */
  readonly sortBy?: string;
  /** `size`: the value is bytes, labelled as `128 MiB`. */
  readonly format?: "size";
}

/** A workload's chart. */
export interface ChartSpec {
  /** What the chart shows, for the title (after `sciobench <workload>: `). */
  readonly title: string;
  /** Lines with points (x quantitative) or grouped bars (x nominal). */
  readonly mark: "line" | "bar";
  /** The x axis: a column, its title with its unit, a log scale, integer ticks. */
  readonly x: {
    readonly column: string;
    readonly title: string;
    readonly log?: boolean;
    readonly integer?: boolean;
    /** Ticks at the x values the rows hold, labelled as the run labels them (`32^2`). */
    readonly squares?: boolean;
  };
  /** The y axis title, with its unit (values are the mean over repeats, error bars one sd). */
  readonly yTitle: string;
  /** The measures drawn on y. */
  readonly measures: readonly ChartMeasure[];
  /** The series (colour): the row columns joined by a space, and the legend's title. */
  readonly series: { readonly columns: readonly string[]; readonly title: string };
  /** Panels in rows and columns. */
  readonly facets?: { readonly row?: ChartFacet; readonly column?: ChartFacet };
  /** Bars side by side within one x value (mark bar): a column and its legend title. */
  readonly offset?: { readonly column: string; readonly title: string };
  /** Draws the seed's model beside each series: every x unit costs what the fewest did. */
  readonly perUnitModel?: { readonly label: string };
  /** Each panel's y scale its own. */
  readonly independentY?: boolean;
  /** Size of one panel, pixels. */
  readonly width: number;
  readonly height: number;
}
