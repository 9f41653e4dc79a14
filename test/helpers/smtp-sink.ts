import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A minimal SMTP server for tests: accepts every message (plain SMTP, no auth, no TLS) and keeps
 * the raw DATA of each, so a test can read what the service mailed.
 */
export class SmtpSink {
  readonly messages: string[] = [];
  private constructor(private readonly server: net.Server) {}

  static async start(): Promise<SmtpSink> {
    const server = net.createServer();
    const sink = new SmtpSink(server);
    server.on('connection', (socket) => sink.serve(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  get url(): string {
    return `smtp://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private serve(socket: net.Socket): void {
    let buffer = '';
    let inData = false;
    let data = '';
    socket.write('220 sink ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          data += buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          this.messages.push(data);
          data = '';
          socket.write('250 queued\r\n');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol === -1) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 sink\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
    socket.on('error', () => socket.destroy());
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
