# docsmith's container image. The binary is built outside the image
# (`make image` runs `make build` first, a static binary with CGO off), so the
# image needs no Go toolchain and builds in seconds.
#
#   make image                      # docsmith:local
#   docker run -p 8080:8080 -v docsmith-data:/data docsmith:local
#
# BASE_IMAGE is debian:bookworm-slim; `make image` makes it from Debian's
# packages (scripts/debian-base-image.sh) when no registry has it for us.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

# git does the agent's checkouts, commits and pushes; the CA certificates
# let it and the model and forge clients speak TLS; curl is the health check
# (about 1 MB, as git already brings most of its libraries).
#
# tini is PID 1: it hands SIGTERM to docsmith and reaps orphans. A git that
# runs past its timeout is killed with its whole process group; its helpers
# (git-remote-https, ssh) are then children of PID 1, and only an init
# reaps them.
#
# apt-get clean matters: a base made with debootstrap keeps every
# downloaded package in /var/cache/apt (about 100 MB here) unless told.
RUN export DEBIAN_FRONTEND=noninteractive \
	&& apt-get update \
	&& apt-get install -y --no-install-recommends git ca-certificates curl tini \
	&& apt-get clean \
	&& rm -rf /var/lib/apt/lists/* /var/cache/apt/* \
	&& groupadd --system --gid 10001 docsmith \
	&& useradd --no-create-home --uid 10001 --gid docsmith --home-dir /data --shell /usr/sbin/nologin docsmith \
	&& mkdir -p /data && chown docsmith:docsmith /data

ARG BINARY=bin/docsmith
COPY ${BINARY} /usr/local/bin/docsmith

ARG VERSION=dev
LABEL org.opencontainers.image.title="docsmith" \
	org.opencontainers.image.description="Documentation agent jobs and a docs assistant" \
	org.opencontainers.image.version="${VERSION}"

# Configuration is by environment: every option is DOCSMITH_<NAME>
# (`docsmith serve --help` lists them), secrets also as DOCSMITH_<NAME>_FILE.
# Inside a container the server must listen on all interfaces.
ENV DOCSMITH_ADDR=0.0.0.0:8080 \
	DOCSMITH_DATA_DIR=/data

USER docsmith
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080

# /readyz answers 200 when the server takes requests and its stores answer.
# The port follows DOCSMITH_ADDR, so changing it needs no new health check.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
	CMD curl -fsS -o /dev/null "http://127.0.0.1:${DOCSMITH_ADDR##*:}/readyz" || exit 1

# On SIGTERM docsmith stops taking requests, lets running turns reach a
# checkpoint, closes the database, logs "docsmith stopped" and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/docsmith"]
CMD ["serve"]
