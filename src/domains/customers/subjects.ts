import type { EmployeeSubjects } from '../organizations/index.ts';
import {
  findCustomerSubject, listActiveCustomerIds, lockCustomerSubject, markCustomerTerminated, setCustomerSuspended, touchCustomer,
} from './store.ts';

/**
 * The employee rows as the organizations domain's status machinery sees them (restrictions,
 * suspension, termination: D16, D18-D21). Installed by src/app.ts with `useEmployeeSubjects`.
 */
export const customerSubjects: EmployeeSubjects = {
  lock: lockCustomerSubject,
  find: findCustomerSubject,
  setSuspended: setCustomerSuspended,
  touch: touchCustomer,
  markTerminated: markCustomerTerminated,
  listActive: listActiveCustomerIds,
};
