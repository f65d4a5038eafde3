package io.skiffmq.server.metrics;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.registry.PrometheusScrapeRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Answers {@code GET /metrics} and {@code GET /metrics/per-object} with a scrape in Prometheus' text format
 * (version 0.0.4); any other path is 404, any other method 405. Stateless: one instance serves every connection of
 * the metrics server, on its one event loop.
 */
@ChannelHandler.Sharable
final class ScrapeHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final PrometheusRegistry registry;
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

    ScrapeHandler(PrometheusRegistry registry) {
        this.registry = registry;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) throws IOException {
        String path = new QueryStringDecoder(request.uri()).path();
        FullHttpResponse response;
        if (!path.equals("/metrics") && !path.equals(BrokerCollector.PER_OBJECT_PATH)) {
            response = text(ctx, HttpResponseStatus.NOT_FOUND, "Not Found\n");
        } else if (!request.method().equals(HttpMethod.GET) && !request.method().equals(HttpMethod.HEAD)) {
            response = text(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "Method Not Allowed\n");
            response.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
        } else {
            response = scrape(ctx, path, request.method().equals(HttpMethod.HEAD));
        }
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        HttpUtil.setKeepAlive(response, keepAlive);
        HttpUtil.setContentLength(response, response.content().readableBytes());
        if (keepAlive) {
            ctx.writeAndFlush(response);
        } else {
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }

    private FullHttpResponse scrape(ChannelHandlerContext ctx, String path, boolean head) throws IOException {
        ByteBuf body = ctx.alloc().buffer();
        try {
            if (!head) {
                try (ByteBufOutputStream out = new ByteBufOutputStream(body)) {
                    writer.write(out, registry.scrape(new Request(path)), EscapingScheme.UNDERSCORE_ESCAPING);
                }
            }
            FullHttpResponse response = new DefaultFullHttpResponse(request11(), HttpResponseStatus.OK, body);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, writer.getContentType());
            return response;
        } catch (IOException | RuntimeException e) {
            body.release();
            throw e;
        }
    }

    private static FullHttpResponse text(ChannelHandlerContext ctx, HttpResponseStatus status, String text) {
        ByteBuf body = ctx.alloc().buffer();
        body.writeCharSequence(text, StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(request11(), status, body);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN);
        return response;
    }

    private static io.netty.handler.codec.http.HttpVersion request11() {
        return io.netty.handler.codec.http.HttpVersion.HTTP_1_1;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        System.getLogger(ScrapeHandler.class.getName()).log(System.Logger.Level.WARNING, "metrics scrape failed",
            cause);
        ctx.close();
    }

    /** The scrape's path, which tells the broker's collector whether to give a series per queue. */
    private record Request(String path) implements PrometheusScrapeRequest {
        @Override
        public String getRequestPath() {
            return path;
        }

        @Override
        public String[] getParameterValues(String name) {
            return null;
        }
    }
}
