# Decoy in a container: a static, pure-Go binary on a distroless base (no
# shell), run as an unprivileged user, its data in the /data volume.
#
#   docker build -t decoy .
#   docker run -d -p 8080:8080 -v decoy-data:/data -e DECOY_ADMIN_TOKEN=... decoy
#
# --build-arg VERSION=... names the build in `decoy version` (.git is not
# sent to the build, so the binary cannot read its commit).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /decoy ./cmd/decoy
RUN mkdir /data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /decoy /decoy
# The data directory belongs to the user the server runs as; a new named
# volume starts as a copy of it, owner included. (COPY gives a directory it
# creates to root unless told otherwise: --chown.)
COPY --from=build --chown=65532:65532 /data /data
COPY examples /examples
# distroless's "nonroot", by number, so that runtimes that refuse root can
# tell without reading /etc/passwd.
USER 65532:65532
VOLUME /data
EXPOSE 8080
ENV DECOY_ADDR=0.0.0.0:8080 DECOY_DATA_DIR=/data
# No curl or wget here: the binary asks its own server for /healthz.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["/decoy", "healthcheck"]
ENTRYPOINT ["/decoy"]
CMD ["serve"]
