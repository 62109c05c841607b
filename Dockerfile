# Tether in a container: build on Debian 12, run the stripped binary on a
# slim Debian 12 with the API on 0.0.0.0:7420 inside the container (publish
# it on the host's loopback: docker run -p 127.0.0.1:7420:7420 …). The data
# is the volume /data; its token is /data/token.
FROM debian:12 AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      g++ cmake ninja-build ccache libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev \
      libsqlite3-dev libpq-dev libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev libgtest-dev libgmock-dev \
      libbenchmark-dev libssl-dev ca-certificates && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
 && cmake --build /build --target tether \
 && cmake --install /build --prefix /out/usr --strip --component runtime

FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      libsqlite3-0 libpq5 libspdlog1.10 libfmt9 libssl3 libboost-json1.81.0 libboost-url1.81.0 bubblewrap bash \
      ca-certificates && rm -rf /var/lib/apt/lists/* \
 && useradd --system --user-group --home-dir /data --shell /usr/sbin/nologin tether \
 && mkdir -p /data && chown tether:tether /data && chmod 700 /data
COPY --from=build /out/usr /usr
USER tether
VOLUME /data
EXPOSE 7420
ENTRYPOINT ["tether"]
CMD ["serve", "--data", "/data", "--listen", "0.0.0.0:7420"]
