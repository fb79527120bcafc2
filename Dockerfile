# Decoy in a container: a static, pure-Go binary on a distroless base.
# docker build -t decoy .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /decoy ./cmd/decoy

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /decoy /decoy
COPY examples /examples
EXPOSE 8080
ENV DECOY_ADDR=0.0.0.0:8080 DECOY_DATA_DIR=/tmp/decoy-data
ENTRYPOINT ["/decoy"]
CMD ["serve"]
