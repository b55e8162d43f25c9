# docsmith's container image. The binary is built outside the image
# (`make image` runs `make build` first, a static binary with CGO off), so the
# image needs no Go toolchain and builds in seconds.
#
#   make image                      # docsmith:local
#   docker run -p 8080:8080 -v docsmith-data:/data docsmith:local
FROM debian:bookworm-slim

# git does the agent's checkouts, commits and pushes; the CA certificates
# let it and the model and forge clients speak TLS. curl is for the health check.
RUN apt-get update \
	&& apt-get install -y --no-install-recommends git ca-certificates curl \
	&& rm -rf /var/lib/apt/lists/* \
	&& groupadd --system --gid 10001 docsmith \
	&& useradd --no-create-home --uid 10001 --gid docsmith --home-dir /data --shell /usr/sbin/nologin docsmith \
	&& mkdir -p /data && chown docsmith:docsmith /data

ARG BINARY=bin/docsmith
COPY ${BINARY} /usr/local/bin/docsmith

# Configuration is by environment: every option is DOCSMITH_<NAME>
# (`docsmith config show` lists them). Inside a container the server must
# listen on all interfaces.
ENV DOCSMITH_ADDR=0.0.0.0:8080 \
	DOCSMITH_DATA_DIR=/data

USER docsmith
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080

HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
	CMD curl -fsS http://127.0.0.1:8080/readyz >/dev/null || exit 1

# docsmith stops cleanly on SIGTERM: it stops taking requests, lets running
# turns reach a checkpoint and closes the database.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/docsmith"]
CMD ["serve"]
