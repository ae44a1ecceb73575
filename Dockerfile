# retrace with Debian's Chromium and the Playwright driver, serving
# Streamable HTTP on port 8931. docs/deploy.md says how to run it (token,
# Chromium's sandbox, flags):
#
#   docker build -t retrace .
#   docker run --init -e RETRACE_AUTH_TOKEN=$(openssl rand -hex 32) -p 8931:8931 retrace

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/retrace .

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      chromium fonts-liberation nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/retrace /usr/local/bin/retrace
# The driver (npm package playwright-core@1.52.0, fetched by retrace install
# from the npm registry) lives outside any home directory, read-only for
# the user that runs retrace.
ENV RETRACE_DRIVER_DIR=/opt/retrace/playwright-driver-1.52.0
RUN retrace install && rm -rf /root/.npm
# Not root, so that Chromium keeps its sandbox where the container allows
# it (docs/deploy.md, "A container image").
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin retrace
USER retrace
WORKDIR /home/retrace
EXPOSE 8931
ENTRYPOINT ["retrace"]
# A non-loopback --host needs RETRACE_AUTH_TOKEN (or --insecure-no-auth):
# without one, retrace refuses to start.
CMD ["--port", "8931", "--host", "0.0.0.0"]
