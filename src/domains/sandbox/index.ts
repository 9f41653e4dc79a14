/** Sandbox simulations (D40): deposits, KYC decisions, card shipments (issue 30) and hold expiry (issue 26). Registered only in sandbox deployments. */
export { sandboxRoutes } from './routes.ts';
