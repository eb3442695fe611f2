// The official TypeScript SDK's experimental remote server (2.4.0: "experimental/server" and
// "experimental/node", with the `ws` package for WebSocket upgrades) serving an agent app over
// Streamable HTTP and WebSocket on one endpoint, /acp. Used by ts_agent.mjs --listen.
//
// Prints `listening: http://HOST:PORT/acp` and `listening: ws://HOST:PORT/acp` on stdout once
// it listens (port 0: one the system picks). With a token, a request (or upgrade) without
// `Authorization: Bearer <token>` is answered 401 before the SDK sees it: the SDK leaves
// authentication to the host. It stops when stdin closes or on SIGTERM/SIGINT.

import http from "node:http";

import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";

/**
 * @param {{connect: Function}} app
 * @param {{listen: string, token?: string, log: (...args: unknown[]) => void}} options
 */
export async function serveRemote(app, { listen, token, log }) {
  const split = listen.lastIndexOf(":");
  const host = listen.slice(0, split).replace(/^\[|\]$/g, "");
  const port = Number(listen.slice(split + 1));
  if (split < 0 || !host || !Number.isInteger(port)) throw new Error(`not HOST:PORT: ${listen}`);

  const server = new AcpServer({ agent: app });
  const handle = createNodeHttpHandler(server);
  const sockets = new WebSocketServer({ noServer: true });
  const upgrade = createNodeWebSocketUpgradeHandler(server, sockets);
  const allowed = (req) => token === undefined || req.headers.authorization === `Bearer ${token}`;
  const onPath = (req) => new URL(req.url ?? "/", "http://localhost").pathname === "/acp";

  const httpServer = http.createServer((req, res) => {
    if (!onPath(req)) {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not Found");
    } else if (!allowed(req)) {
      res.writeHead(401, { "content-type": "text/plain" }).end("Unauthorized");
    } else {
      handle(req, res);
    }
  });
  httpServer.on("upgrade", (req, socket, head) => {
    if (!onPath(req) || !allowed(req)) {
      const status = onPath(req) ? "401 Unauthorized" : "404 Not Found";
      socket.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    upgrade(req, socket, head);
  });
  await new Promise((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(port, host, resolve);
  });
  const bound = httpServer.address();
  const where = `${host.includes(":") ? `[${host}]` : host}:${bound.port}/acp`;
  process.stdout.write(`listening: http://${where}\nlistening: ws://${where}\n`);
  log(`listening on ${where}`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.close();
    httpServer.closeAllConnections?.();
    httpServer.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.stdin.on("end", stop);
  process.stdin.resume();
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
