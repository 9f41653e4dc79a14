import http from 'node:http';

/** A request with exactly these headers and body bytes (fetch would add a Content-Type). */
export function rawRequest(baseUrl: string, options: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  const url = new URL(options.path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method, headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}
