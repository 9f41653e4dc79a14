/** Where this instance runs: sandbox (simulations, generated secrets) or production (D12, D13). */
export type DeploymentEnv = 'sandbox' | 'production';
