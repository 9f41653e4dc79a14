declare module 'parse-prometheus-text-format' {
  /** Families of the Prometheus text format, each with its samples (values as strings). */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
