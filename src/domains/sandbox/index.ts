/** Sandbox simulations (D40): deposits, KYC decisions, card shipments (issue 30). Registered only in sandbox deployments. */
export { sandboxRoutes, type SandboxDeps } from './routes.ts';
export { depositHandlers, type DepositHandler, type DepositSubjectType, type SimulatedDeposit } from './deposit.ts';
