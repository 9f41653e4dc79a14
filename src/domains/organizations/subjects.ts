/**
 * Companies and employees are the two kinds of subject of restrictions, capabilities and status
 * changes (section 3, D18-D21). Organizations owns that machinery and the company rows; the
 * employee rows belong to the customers domain, which sits above this one. So the machinery reaches
 * employees through this port, which the customers domain implements (`employeeSubjects`) and
 * src/app.ts installs once at wiring time (`useEmployeeSubjects`). Nothing is wired by importing.
 */
import type { Queryable } from '../../platform/db/db.ts';
import { invariant } from '../../platform/errors.ts';
import type { SubjectRow } from './store.ts';

export type { SubjectRow };

export interface EmployeeSubjects {
  /** Locks the employee row (FOR UPDATE); with a partnerId, another partner's employee is null. */
  lock(q: Queryable, customerId: string, partnerId: string | null): Promise<SubjectRow | null>;
  /** The employee's partner, employer, lifecycle and suspension, or null. */
  find(q: Queryable, customerId: string): Promise<SubjectRow | null>;
  setSuspended(q: Queryable, customerId: string, suspended: boolean, at: Date): Promise<void>;
  /** Bumps modifyTime after a change held elsewhere (restrictions). */
  touch(q: Queryable, customerId: string, at: Date): Promise<void>;
  markTerminated(q: Queryable, customerId: string, at: Date): Promise<void>;
  /** Ids of the company's employees whose lifecycle is ACTIVE, in id order. */
  listActive(q: Queryable, organizationId: string): Promise<string[]>;
}

let installed: EmployeeSubjects | null = null;

/** Wiring (src/app.ts): the customers domain's implementation. Idempotent for the same object. */
export function useEmployeeSubjects(port: EmployeeSubjects): void {
  invariant(installed === null || installed === port, 'one EmployeeSubjects implementation per process');
  installed = port;
}

export function employeeSubjects(): EmployeeSubjects {
  invariant(installed, 'employee subjects are wired: call wireDomains() (src/app.ts) before using subject status');
  return installed;
}
