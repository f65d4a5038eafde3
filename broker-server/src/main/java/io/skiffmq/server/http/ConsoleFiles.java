package io.skiffmq.server.http;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.Map;

/**
 * The web console's static files, served beside the API on the management port: every path that is not under
 * {@code /api} is one of them. The files are read from the class path once, at start, into memory; a request can
 * only name one of {@link #FILES} (a map lookup, so no path ever reaches a file system). Each answer carries an
 * ETag (a digest of the content) and {@code Cache-Control: no-cache}, so a browser revalidates and gets 304 while
 * the file is unchanged; a Content-Security-Policy that allows scripts, styles and requests to the console's own
 * origin only (no inline script); and {@code nosniff}. Only GET and HEAD; anything else is 405. Immutable, thread-safe.
 */
final class ConsoleFiles {
    /** Where the files are on the class path. */
    static final String RESOURCE_DIRECTORY = "/io/skiffmq/server/console/";
    /** The files served, by name, with their content types. {@code /} is {@code index.html}. */
    static final Map<String, String> FILES = Map.of(
        "index.html", "text/html; charset=utf-8",
        "console.js", "text/javascript; charset=utf-8",
        "api.js", "text/javascript; charset=utf-8",
        "charts.js", "text/javascript; charset=utf-8",
        "dom.js", "text/javascript; charset=utf-8",
        "pages.js", "text/javascript; charset=utf-8",
        "queue.js", "text/javascript; charset=utf-8",
        "console.css", "text/css; charset=utf-8");
    /** No inline script or style, no other origin; the API is fetched from this origin. */
    static final String CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; "
        + "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

    private static final String NOSNIFF_HEADER = "X-Content-Type-Options";

    private record File(byte[] content, String contentType, String etag) {
    }

    /** By path: {@code /} and {@code /} + each name. */
    private final Map<String, File> files;

    /** Reads every file of {@link #FILES}; fails when one is missing from the class path. */
    ConsoleFiles() {
        Map<String, File> read = new HashMap<>();
        for (Map.Entry<String, String> f : FILES.entrySet()) {
            byte[] content = read(f.getKey());
            read.put("/" + f.getKey(), new File(content, f.getValue(), etag(content)));
        }
        read.put("/", read.get("/index.html"));
        this.files = Map.copyOf(read);
    }

    /** Whether the path (raw, without the query) is the console's rather than the API's. */
    static boolean serves(String rawPath) {
        return !(rawPath.equals("/api") || rawPath.startsWith("/api/"));
    }

    /**
     * The answer to a request for one of the console's paths.
     *
     * @param ifNoneMatch the request's {@code If-None-Match} header, or null
     */
    FullHttpResponse answer(String method, String rawPath, String ifNoneMatch) {
        boolean head = "HEAD".equals(method);
        if (!head && !"GET".equals(method)) {
            FullHttpResponse refused = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "Method Not Allowed\n");
            refused.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
            return refused;
        }
        File file = files.get(rawPath);
        if (file == null) {
            return text(HttpResponseStatus.NOT_FOUND, "Not Found\n");
        }
        if (ifNoneMatch != null && matches(ifNoneMatch, file.etag())) {
            FullHttpResponse notModified = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.NOT_MODIFIED, Unpooled.EMPTY_BUFFER);
            headers(notModified, file);
            return notModified;
        }
        FullHttpResponse ok = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
            head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(file.content()));
        headers(ok, file);
        ok.headers().set(HttpHeaderNames.CONTENT_TYPE, file.contentType());
        ok.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, file.content().length);
        return ok;
    }

    private static void headers(FullHttpResponse response, File file) {
        response.headers().set(HttpHeaderNames.ETAG, file.etag());
        response.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        response.headers().set(HttpHeaderNames.CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY);
        response.headers().set(NOSNIFF_HEADER, "nosniff");
        response.headers().set(HttpHeaderNames.X_FRAME_OPTIONS, "DENY");
    }

    /** {@code If-None-Match}: a list of tags, or {@code *}. */
    private static boolean matches(String ifNoneMatch, String etag) {
        for (String tag : ifNoneMatch.split(",")) {
            String t = tag.strip();
            if (t.equals("*") || t.equals(etag) || t.equals("W/" + etag)) {
                return true;
            }
        }
        return false;
    }

    private static FullHttpResponse text(HttpResponseStatus status, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
            Unpooled.wrappedBuffer(bytes));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        response.headers().set(NOSNIFF_HEADER, "nosniff");
        return response;
    }

    private static byte[] read(String name) {
        try (InputStream in = ConsoleFiles.class.getResourceAsStream(RESOURCE_DIRECTORY + name)) {
            if (in == null) {
                throw new IllegalStateException("console file " + RESOURCE_DIRECTORY + name
                    + " is not on the class path");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String etag(byte[] content) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(content);
            return "\"" + HexFormat.of().formatHex(digest, 0, 16) + "\"";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from the JDK", e);
        }
    }
}
