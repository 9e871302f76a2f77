# fleetwarden's Node host as a container: one process (`npm start`), the embedded libSQL database,
# the admin token and the webhook secret on the /data volume, running as the unprivileged `node`
# user. Build: docker build -t fleetwarden .   Run: see docs/box.md.
FROM node:20-slim

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    DATABASE_URL=file:/data/fleetwarden.db

WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts run (libSQL and esbuild ship their binaries as optional packages).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .

RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8787

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# SIGTERM stops the host gracefully (functions/node.ts); npm forwards it.
STOPSIGNAL SIGTERM
CMD ["npm", "start"]
