package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * Frames to {@link Command} records: key, version, then the fields, which must fill the frame exactly, as
 * {@code rabbit_stream_core:parse_command} matches them (anything it cannot match is its {@code unknown}, closed
 * with 0x0d). The commands that come once or more per message ({@link #isHot}) are not decoded here but read
 * through their flyweights. Stateless; safe from any thread.
 */
public final class StreamCodec {
    private StreamCodec() {
    }

    /**
     * True for the frames read through a flyweight instead of {@link #decode}: publish ({@link PublishFrame}),
     * publish confirm and error ({@link PublishConfirmFrame}, {@link PublishErrorFrame}), deliver
     * ({@link DeliverFrame}), credit ({@link CreditFrame}) and store offset ({@link StoreOffsetFrame}). The credit
     * response is a record.
     */
    public static boolean isHot(int wireKey) {
        return switch (wireKey) {
            case 0x02, 0x03, 0x04, 0x08, 0x09, 0x0a -> true;
            default -> false;
        };
    }

    /**
     * Decodes the readable bytes of {@code frame} (key, version and fields, as {@link StreamFrameDecoder} emits a
     * frame), moving its reader index to the end. Neither retains nor releases it. A heartbeat decodes to
     * {@link ConnectionCommand.Heartbeat#INSTANCE}, without allocating.
     *
     * @throws StreamDecodeException {@link DecodeFailure#UNKNOWN_COMMAND} for a key or version the protocol does
     *         not define, {@link DecodeFailure#BAD_FIELDS} for fields cut short or followed by more bytes,
     *         {@link DecodeFailure#BAD_VALUE} for a malformed field
     * @throws IllegalArgumentException for a frame read through a flyweight ({@link #isHot})
     */
    public static Command decode(ByteBuf frame) throws StreamDecodeException {
        if (frame.readableBytes() < StreamFrame.MIN_SIZE) {
            throw StreamDecodeException.of(DecodeFailure.FRAME_TOO_SMALL, "frame of %d bytes",
                frame.readableBytes());
        }
        int wireKey = frame.readUnsignedShort();
        int version = frame.readUnsignedShort();
        if (isHot(wireKey)) {
            throw new IllegalArgumentException("key 0x" + Integer.toHexString(wireKey) + " is read with a flyweight");
        }
        CommandKey command = CommandKey.of(wireKey);
        if (command == null || version != 1) {
            throw StreamDecodeException.of(DecodeFailure.UNKNOWN_COMMAND, "key 0x%04x, version %d", wireKey, version);
        }
        Command decoded = (wireKey & CommandKey.RESPONSE_FLAG) == 0 ? request(command, frame)
            : response(command, frame);
        if (decoded == null) {
            throw StreamDecodeException.of(DecodeFailure.UNKNOWN_COMMAND, "key 0x%04x: %s has no response",
                wireKey, command.protocolName());
        }
        if (frame.isReadable()) {
            throw StreamDecodeException.of(DecodeFailure.BAD_FIELDS, "%d bytes after the fields of %s",
                frame.readableBytes(), command.protocolName());
        }
        return decoded;
    }

    private static Command request(CommandKey command, ByteBuf in) throws StreamDecodeException {
        return switch (command) {
            case DECLARE_PUBLISHER -> PublisherCommand.DeclarePublisher.read(in);
            case QUERY_PUBLISHER_SEQUENCE -> PublisherCommand.QueryPublisherSequence.read(in);
            case DELETE_PUBLISHER -> PublisherCommand.DeletePublisher.read(in);
            case SUBSCRIBE -> ConsumerCommand.Subscribe.read(in);
            case QUERY_OFFSET -> ConsumerCommand.QueryOffset.read(in);
            case UNSUBSCRIBE -> ConsumerCommand.Unsubscribe.read(in);
            case CREATE_STREAM -> ManagementCommand.CreateStream.read(in);
            case DELETE_STREAM -> ManagementCommand.DeleteStream.read(in);
            case METADATA -> ManagementCommand.Metadata.read(in);
            case METADATA_UPDATE -> ManagementCommand.MetadataUpdate.read(in);
            case PEER_PROPERTIES -> ConnectionCommand.PeerProperties.read(in);
            case SASL_HANDSHAKE -> ConnectionCommand.SaslHandshake.read(in);
            case SASL_AUTHENTICATE -> ConnectionCommand.SaslAuthenticate.read(in);
            case TUNE -> ConnectionCommand.Tune.read(in, false);
            case OPEN -> ConnectionCommand.Open.read(in);
            case CLOSE -> ConnectionCommand.Close.read(in);
            case HEARTBEAT -> ConnectionCommand.Heartbeat.INSTANCE;
            case ROUTE -> ManagementCommand.Route.read(in);
            case PARTITIONS -> ManagementCommand.Partitions.read(in);
            case CONSUMER_UPDATE -> ConsumerCommand.ConsumerUpdate.read(in);
            case EXCHANGE_COMMAND_VERSIONS -> ConnectionCommand.ExchangeCommandVersions.read(in);
            case STREAM_STATS -> ManagementCommand.StreamStats.read(in);
            case CREATE_SUPER_STREAM -> ManagementCommand.CreateSuperStream.read(in);
            case DELETE_SUPER_STREAM -> ManagementCommand.DeleteSuperStream.read(in);
            case RESOLVE_OFFSET_SPEC -> ConsumerCommand.ResolveOffsetSpec.read(in);
            // the hot commands were turned away before
            case PUBLISH, PUBLISH_CONFIRM, PUBLISH_ERROR, DELIVER, CREDIT, STORE_OFFSET -> throw new AssertionError();
        };
    }

    /** The response to {@code command}, or null when it has none. */
    private static Command response(CommandKey command, ByteBuf in) throws StreamDecodeException {
        if (Response.COMMANDS.contains(command)) {
            return Response.read(command, in);
        }
        return switch (command) {
            case QUERY_PUBLISHER_SEQUENCE -> PublisherCommand.QueryPublisherSequenceResponse.read(in);
            case CREDIT -> ConsumerCommand.CreditResponse.read(in);
            case QUERY_OFFSET -> ConsumerCommand.QueryOffsetResponse.read(in);
            case METADATA -> ManagementCommand.MetadataResponse.read(in);
            case PEER_PROPERTIES -> ConnectionCommand.PeerPropertiesResponse.read(in);
            case SASL_HANDSHAKE -> ConnectionCommand.SaslHandshakeResponse.read(in);
            case SASL_AUTHENTICATE -> ConnectionCommand.SaslAuthenticateResponse.read(in);
            case TUNE -> ConnectionCommand.Tune.read(in, true);
            case OPEN -> ConnectionCommand.OpenResponse.read(in);
            case ROUTE, PARTITIONS -> ManagementCommand.StreamsResponse.read(command, in);
            case CONSUMER_UPDATE -> ConsumerCommand.ConsumerUpdateResponse.read(in);
            case EXCHANGE_COMMAND_VERSIONS -> ConnectionCommand.ExchangeCommandVersionsResponse.read(in);
            case STREAM_STATS -> ManagementCommand.StreamStatsResponse.read(in);
            case RESOLVE_OFFSET_SPEC -> ConsumerCommand.ResolveOffsetSpecResponse.read(in);
            default -> null;
        };
    }
}
