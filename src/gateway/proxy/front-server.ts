/**
 * @module
 * The public listener: a plain `net.Server` whose connections run the raw HTTP/1.1 path
 * (http1-connection.ts), with the node:http server of the slow path (WebSocket upgrades, `Expect`,
 * HTTP/1.0, CONNECT) fed the connections handed to it at a request boundary. Tracks every connection
 * so `closeAll` can end them at shutdown. Created by gateway.ts.
 */
import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { ProxyContext } from './exchange.ts';
import { type ConnectionServer, Http1Connection } from './http1-connection.ts';

/** The public server and its shutdown. */
export interface FrontServer {
  /** Listen on it like any net.Server. */
  server: Server;
  /** Destroys every open connection, raw or handed to the slow path (idle or not). */
  closeAll(): void;
}

/**
 * Creates the public server.
 * @param context what every exchange shares (router, scheduler, proxy timeout)
 * @param slow a node:http server (not listening) that takes the connections the raw path hands off
 */
export function createFrontServer(context: ProxyContext, slow: HttpServer): FrontServer {
  const open = new Set<Http1Connection>();
  // node:http tracks connections only on a server that listens (closeAllConnections is a no-op on `slow`).
  const handed = new Set<Socket>();
  const host: ConnectionServer = {
    context,
    handOff(conn, bytes) {
      const socket = conn.socket;
      // Paused while node:http attaches (it may read the handle directly), then its own reads start.
      socket.pause();
      handed.add(socket);
      socket.once('close', () => handed.delete(socket));
      if (bytes.length > 0) socket.unshift(bytes);
      slow.emit('connection', socket);
      socket.resume();
    },
    forget(conn) {
      open.delete(conn);
    },
  };
  const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket: Socket) => {
    open.add(new Http1Connection(socket, host));
  });
  return {
    server,
    closeAll() {
      for (const conn of open) conn.destroy();
      open.clear();
      for (const socket of handed) socket.destroy();
      handed.clear();
    },
  };
}
