/** Probes: the sandbox decimal echo (D4) and the operators' mail outbox read (D14, D51). */
export { diagnosticsRoutes } from './routes.ts';
