package io.skiffmq.codec.stream;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.DecoderException;
import io.skiffmq.codec.stream.ConnectionCommand.CommandVersion;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The far end of a socket for the RabbitMQ Stream Java client, made of this codec and nothing else: it decodes
 * every frame the client sends (records through {@link StreamCodec}, the hot commands through their flyweights,
 * snapshotted), queues what it read, and answers the handshake and the requests the way RabbitMQ's reader does, so
 * that the client's own decoder reads our encodings. Not a broker: it keeps no state beyond the connections.
 * Handlers run on the peer's event loop; the queue and the answers are safe from the test thread.
 */
final class StreamTestPeer implements AutoCloseable {
    /** Something a client sent, on its connection (numbered from 0 in the order they were accepted). */
    record Received(int connection, Object what) {
    }

    /** A publish frame as read through {@link PublishFrame}. */
    record Publish(int version, int publisherId, List<Entry> entries) {
    }

    record Entry(long publishingId, String filterValue, boolean batch, int records, int compression, byte[] data) {
    }

    record Credit(int subscriptionId, int credit) {
    }

    record StoreOffset(String reference, String stream, long offset) {
    }

    /** A frame the codec refused. */
    record Refused(DecodeFailure failure) {
    }

    /** The versions RabbitMQ 4 answers an exchange of command versions with ({@code command_versions/0}). */
    static final List<CommandVersion> SERVER_VERSIONS = List.of(new CommandVersion(0x01, 1, 1),
        new CommandVersion(0x02, 1, 2), new CommandVersion(0x05, 1, 1), new CommandVersion(0x06, 1, 1),
        new CommandVersion(0x07, 1, 1), new CommandVersion(0x09, 1, 1), new CommandVersion(0x0a, 1, 1),
        new CommandVersion(0x0b, 1, 1), new CommandVersion(0x0c, 1, 1), new CommandVersion(0x0d, 1, 1),
        new CommandVersion(0x0e, 1, 1), new CommandVersion(0x0f, 1, 1), new CommandVersion(0x16, 1, 1),
        new CommandVersion(0x17, 1, 1), new CommandVersion(0x18, 1, 1), new CommandVersion(0x19, 1, 1),
        new CommandVersion(0x1c, 1, 1), new CommandVersion(0x1d, 1, 1), new CommandVersion(0x1e, 1, 1),
        new CommandVersion(0x1f, 1, 1));

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    private final List<Channel> connections = new CopyOnWriteArrayList<>();
    private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
    private final Map<CommandKey, Function<Command, Command>> answers = new ConcurrentHashMap<>();
    private volatile long heartbeat;

    StreamTestPeer() throws InterruptedException {
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    int id = connections.size();
                    connections.add(ch);
                    StreamFrameDecoder decoder = StreamFrameDecoder.server();
                    ch.pipeline().addLast(decoder, new Reader(id, decoder));
                }
            }).bind("localhost", 0).sync().channel();
    }

    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** The heartbeat (seconds) proposed in tune; 0 by default. */
    void heartbeat(long seconds) {
        heartbeat = seconds;
    }

    /** Answers requests for {@code command} with {@code answer} instead of the default. */
    void answer(CommandKey command, Function<Command, Command> answer) {
        answers.put(command, answer);
    }

    /** The next thing any connection sent, waiting up to 10 s. */
    Received next() throws InterruptedException {
        Received r = received.poll(10, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("the client sent nothing within 10 s");
        }
        return r;
    }

    /** The next thing sent, which must be a {@code type}. */
    <T> T next(Class<T> type) throws InterruptedException {
        Received r = next();
        if (!type.isInstance(r.what())) {
            throw new AssertionError("expected a " + type.getSimpleName() + ", the client sent " + r);
        }
        return type.cast(r.what());
    }

    /** Skips until a {@code type} arrives (for connections that interleave). */
    <T> T find(Class<T> type) throws InterruptedException {
        return type.cast(received(type).what());
    }

    /** Skips until a {@code type} arrives; returns it with the connection it came on. */
    Received received(Class<?> type) throws InterruptedException {
        while (true) {
            Received r = next();
            if (type.isInstance(r.what())) {
                return r;
            }
        }
    }

    /** Everything received so far, without waiting. */
    List<Received> drain() {
        List<Received> out = new ArrayList<>();
        received.drainTo(out);
        return out;
    }

    /** Writes what {@code writer} puts in a buffer to connection {@code connection}. */
    void send(int connection, Consumer<ByteBuf> writer) {
        Channel ch = connections.get(connection);
        ByteBuf out = ch.alloc().buffer();
        writer.accept(out);
        ch.writeAndFlush(out).syncUninterruptibly();
    }

    /** Writes {@code messages} (buffers, file regions) as they are, in order, then flushes. */
    void write(int connection, Object... messages) {
        Channel ch = connections.get(connection);
        for (Object m : messages) {
            ch.write(m);
        }
        ch.flush();
    }

    void send(int connection, Command command) {
        send(connection, out -> StreamFrameWriter.writeCommand(out, command));
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        connections.forEach(Channel::close);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private final class Reader extends ChannelInboundHandlerAdapter {
        private final int id;
        private final StreamFrameDecoder decoder;
        private final PublishFrame publish = new PublishFrame();
        private final CreditFrame credit = new CreditFrame();
        private final StoreOffsetFrame storeOffset = new StoreOffsetFrame();

        Reader(int id, StreamFrameDecoder decoder) {
            this.id = id;
            this.decoder = decoder;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                Object what = read(frame);
                received.add(new Received(id, what));
                if (what instanceof Command command) {
                    answer(ctx, command).ifPresent(a -> ctx.writeAndFlush(encode(ctx, a)));
                    if (command instanceof ConnectionCommand.SaslAuthenticate) {
                        ctx.writeAndFlush(encode(ctx, new ConnectionCommand.Tune(StreamFrameDecoder.DEFAULT_FRAME_MAX,
                            heartbeat, false)));
                    } else if (command instanceof ConnectionCommand.Open) {
                        decoder.frameMax(StreamFrameDecoder.DEFAULT_FRAME_MAX);
                    }
                }
            } catch (StreamDecodeException e) {
                received.add(new Received(id, new Refused(e.failure())));
            } finally {
                frame.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof DecoderException && cause.getCause() instanceof StreamDecodeException e) {
                received.add(new Received(id, new Refused(e.failure())));
            } else {
                received.add(new Received(id, cause));
            }
            ctx.close();
        }

        private ByteBuf encode(ChannelHandlerContext ctx, Command command) {
            ByteBuf out = ctx.alloc().buffer();
            StreamFrameWriter.writeCommand(out, command);
            return out;
        }

        private Object read(ByteBuf frame) throws StreamDecodeException {
            int key = StreamFrame.key(frame);
            if (!StreamCodec.isHot(key)) {
                return StreamCodec.decode(frame);
            }
            return switch (StreamFrame.command(frame)) {
                case PUBLISH -> {
                    publish.wrap(frame);
                    List<Entry> entries = new ArrayList<>();
                    while (publish.next()) {
                        byte[] data = new byte[publish.messageLength()];
                        frame.getBytes(publish.messageIndex(), data);
                        entries.add(new Entry(publish.publishingId(), publish.filterValue(), publish.isSubEntryBatch(),
                            publish.records(), publish.compression(), data));
                    }
                    yield new Publish(publish.version(), publish.publisherId(), entries);
                }
                case CREDIT -> {
                    credit.wrap(frame);
                    yield new Credit(credit.subscriptionId(), credit.credit());
                }
                case STORE_OFFSET -> {
                    storeOffset.wrap(frame);
                    yield new StoreOffset(storeOffset.reference(), storeOffset.stream(), storeOffset.offset());
                }
                default -> throw new AssertionError("the decoder let a " + StreamFrame.command(frame) + " through");
            };
        }

        /** What RabbitMQ answers, unless the test said otherwise. */
        private Optional<Command> answer(ChannelHandlerContext ctx, Command c) {
            Function<Command, Command> custom = c.isResponse() ? null : answers.get(c.command());
            if (custom != null) {
                return Optional.ofNullable(custom.apply(c));
            }
            ResponseCode ok = ResponseCode.OK;
            Command answer = null;
            if (c instanceof ConnectionCommand.PeerProperties p) {
                answer = new ConnectionCommand.PeerPropertiesResponse(p.correlationId(), ok,
                    Map.of("product", "SkiffMQ", "version", "4.1.0"));
            } else if (c instanceof ConnectionCommand.SaslHandshake h) {
                answer = new ConnectionCommand.SaslHandshakeResponse(h.correlationId(), ok, List.of("PLAIN", "ANONYMOUS"));
            } else if (c instanceof ConnectionCommand.SaslAuthenticate a) {
                answer = new ConnectionCommand.SaslAuthenticateResponse(a.correlationId(), ok, null);
            } else if (c instanceof ConnectionCommand.Open o) {
                answer = new ConnectionCommand.OpenResponse(o.correlationId(), ok,
                    Map.of("advertised_host", "localhost", "advertised_port", String.valueOf(port())));
            } else if (c instanceof ConnectionCommand.ExchangeCommandVersions v) {
                answer = new ConnectionCommand.ExchangeCommandVersionsResponse(v.correlationId(), ok, SERVER_VERSIONS);
            } else if (c instanceof ConnectionCommand.Close close) {
                answer = new Response(CommandKey.CLOSE, close.correlationId(), ok);
            } else if (c instanceof ManagementCommand.Metadata m) {
                answer = new ManagementCommand.MetadataResponse(m.correlationId(),
                    List.of(new ManagementCommand.Broker(0, "localhost", port())),
                    m.streams().stream().map(s -> new ManagementCommand.StreamMetadata(s, ok, 0, List.of())).toList());
            } else if (c instanceof PublisherCommand.QueryPublisherSequence q) {
                answer = new PublisherCommand.QueryPublisherSequenceResponse(q.correlationId(), ok, 0);
            } else if (!c.isResponse() && Response.COMMANDS.contains(c.command())) {
                answer = new Response(c.command(), ((Correlated) c).correlationId(), ok);
            }
            return Optional.ofNullable(answer);
        }
    }
}
