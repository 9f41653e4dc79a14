import http from 'node:http';

// The reference: plain node:http answering a 100-byte JSON body.
const body = JSON.stringify({ code: 'SYS_SUCCESS', message: null, data: { pad: 'x'.repeat(45) } });
if (Buffer.byteLength(body) !== 100) throw new Error(`reference body is ${Buffer.byteLength(body)} bytes, not 100`);
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
