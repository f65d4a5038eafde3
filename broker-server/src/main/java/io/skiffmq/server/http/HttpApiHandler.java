package io.skiffmq.server.http;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One HTTP connection of the API and the web console: a path under {@code /api} goes to the API, any other is one
 * of the {@link ConsoleFiles}, answered at once from memory. Reads each aggregated request on its event loop
 * (copies what it needs, so the request's buffer is released at once), hands an API request to {@link HttpApi},
 * which answers on other threads, and writes the answer as JSON back on the loop. Requests on one connection are
 * answered one at a time, in order: a request pipelined behind one in progress waits (at most
 * {@value #MAX_WAITING}; more closes the connection). Owned by the channel's event loop.
 */
final class HttpApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    static final int MAX_WAITING = 16;
    private static final System.Logger LOG = System.getLogger(HttpApiHandler.class.getName());

    private final HttpApi api;
    private final ConsoleFiles console;
    /** Requests pipelined behind the one in progress, each retained until it starts. */
    private final java.util.ArrayDeque<FullHttpRequest> waiting = new java.util.ArrayDeque<>();
    private boolean busy;

    HttpApiHandler(HttpApi api, ConsoleFiles console) {
        this.api = api;
        this.console = console;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (busy) {
            if (waiting.size() >= MAX_WAITING) {
                ctx.close();
                return;
            }
            waiting.add(request.retain());
            return;
        }
        start(ctx, request);
    }

    /** Copies what the request holds and asks the API; the answer is written on the loop, then the next starts. */
    private void start(ChannelHandlerContext ctx, FullHttpRequest request) {
        busy = true;
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        if (!request.decoderResult().isSuccess()) {
            answered(ctx, api.error(new ApiException(400, "bad_request", "malformed HTTP request")), false);
            return;
        }
        QueryStringDecoder uri = new QueryStringDecoder(request.uri());
        if (ConsoleFiles.serves(uri.rawPath())) {
            answered(ctx, console.answer(request.method().name(), uri.rawPath(),
                request.headers().get(HttpHeaderNames.IF_NONE_MATCH)), keepAlive);
            return;
        }
        Map<String, String> query = new HashMap<>();
        for (Map.Entry<String, List<String>> parameter : uri.parameters().entrySet()) {
            query.put(parameter.getKey(), parameter.getValue().get(0));
        }
        Map<String, String> headers = new HashMap<>();
        for (Map.Entry<String, String> header : request.headers()) {
            headers.put(header.getKey().toLowerCase(java.util.Locale.ROOT), header.getValue());
        }
        byte[] body = ByteBufUtil.getBytes(request.content());
        InetAddress remote = ctx.channel().remoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
        api.serve(request.method().name(), uri.rawPath(), query, body, headers, remote)
            .whenComplete((response, failure) -> ctx.executor().execute(() -> answered(ctx,
                failure == null ? response : api.error(failure), keepAlive)));
    }

    /** On the loop: writes the answer and starts the next waiting request, if any. */
    private void answered(ChannelHandlerContext ctx, ApiResponse response, boolean keepAlive) {
        answered(ctx, http(response), keepAlive);
    }

    /** On the loop: writes the answer (which this releases) and starts the next waiting request, if any. */
    private void answered(ChannelHandlerContext ctx, FullHttpResponse response, boolean keepAlive) {
        write(ctx, response, keepAlive);
        busy = false;
        if (!keepAlive) {
            return; // the connection closes: what waits is released when it is inactive
        }
        FullHttpRequest next = waiting.poll();
        if (next != null) {
            try {
                start(ctx, next);
            } finally {
                next.release();
            }
        }
    }

    /** A connection idle for {@link HttpApiServer#IDLE_SECONDS} with no request in progress is closed. */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof io.netty.handler.timeout.IdleStateEvent) {
            if (!busy) {
                ctx.close();
            }
            return;
        }
        super.userEventTriggered(ctx, event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        FullHttpRequest request;
        while ((request = waiting.poll()) != null) {
            request.release();
        }
        super.channelInactive(ctx);
    }

    private FullHttpResponse http(ApiResponse response) {
        byte[] json = response.body() == null ? new byte[0] : api.json(response.body());
        FullHttpResponse http = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
            HttpResponseStatus.valueOf(response.status()), Unpooled.wrappedBuffer(json));
        if (json.length > 0) {
            http.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        }
        http.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, json.length);
        http.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        response.headers().forEach(http.headers()::set);
        return http;
    }

    private static void write(ChannelHandlerContext ctx, FullHttpResponse http, boolean keepAlive) {
        if (keepAlive) {
            http.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            ctx.writeAndFlush(http);
        } else {
            ctx.writeAndFlush(http).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.log(System.Logger.Level.WARNING, "HTTP API connection failed, closing it", cause);
        ctx.close();
    }
}
