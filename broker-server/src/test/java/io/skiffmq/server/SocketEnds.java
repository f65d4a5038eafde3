package io.skiffmq.server;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;

/** How the broker ended a raw client's socket, seen by the client once it reads again. */
final class SocketEnds {
    private SocketEnds() {
    }

    /**
     * Reads and drops whatever is left on {@code socket}, the broker's frames included, to the end: true when it
     * ends with a reset (the broker closed with {@code SO_LINGER} 0), false when with the end of the stream (a FIN,
     * which comes only after every byte queued before it). A read that waits past the socket's timeout fails.
     */
    static boolean endsWithReset(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        byte[] drop = new byte[64 * 1024];
        try {
            while (in.read(drop) >= 0) {
                // what the broker had queued for us: dropped
            }
            return false;
        } catch (SocketException e) {
            if (e.getMessage() != null && e.getMessage().contains("reset")) {
                return true;
            }
            throw e;
        }
    }
}
