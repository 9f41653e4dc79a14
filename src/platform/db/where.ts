/**
 * A WHERE clause of the conditions a query needs, with their parameters (issue 34 step 10). A list
 * with optional filters written as one statement (`$3::text IS NULL OR t.card_id = $3`) gets one
 * generic plan for every combination of filters, which cannot use the index of the filter given and
 * reads the whole partner's rows. Built from the filters present, each combination is its own
 * statement with its own plan.
 */
export class Where {
  private readonly conditions: string[] = [];
  readonly params: unknown[] = [];

  /** The placeholder of a new parameter, with its cast (so the statement types it as before). */
  arg(value: unknown, cast: string): string {
    return `$${this.params.push(value)}::${cast}`;
  }

  and(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /**
   * `column = value` when a value is given; nothing for null or undefined (a filter not asked for). A
   * condition every row must meet (the partner's own rows) is written with `and`, never dropped.
   */
  eq(column: string, value: unknown, cast = 'text'): this {
    return value === null || value === undefined ? this : this.and(`${column} = ${this.arg(value, cast)}`);
  }

  /** The conditions joined by AND (`true` when there are none). */
  get sql(): string {
    return this.conditions.length === 0 ? 'true' : this.conditions.join(' AND ');
  }

  /** The placeholder the next parameter would get, for LIMIT and OFFSET after the conditions. */
  next(offset = 0): string {
    return `$${this.params.length + 1 + offset}`;
  }
}
