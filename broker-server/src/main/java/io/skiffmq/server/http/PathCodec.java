package io.skiffmq.server.http;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** Percent-decoding of one path segment ({@code %2F} is {@code /}; a {@code +} stays a {@code +}). Stateless. */
final class PathCodec {
    private PathCodec() {
    }

    static String decode(String segment) {
        if (segment.indexOf('%') < 0) {
            return segment;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(segment.length());
        int i = 0;
        while (i < segment.length()) {
            int percent = segment.indexOf('%', i);
            int end = percent < 0 ? segment.length() : percent;
            byte[] plain = segment.substring(i, end).getBytes(StandardCharsets.UTF_8);
            out.write(plain, 0, plain.length);
            if (percent < 0) {
                break;
            }
            int hi = percent + 2 < segment.length() ? Character.digit(segment.charAt(percent + 1), 16) : -1;
            int lo = hi < 0 ? -1 : Character.digit(segment.charAt(percent + 2), 16);
            if (lo < 0) {
                throw ApiException.badRequest("bad percent-encoding in '" + segment + "'");
            }
            out.write(hi << 4 | lo);
            i = percent + 3;
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
