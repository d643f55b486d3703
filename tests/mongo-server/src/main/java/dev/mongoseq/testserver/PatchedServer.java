package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.MongoThreadFactory;
import de.bwaldvogel.mongo.wire.MongoExceptionHandler;
import de.bwaldvogel.mongo.wire.MongoWireMessageEncoder;
import de.bwaldvogel.mongo.wire.MongoWireProtocolHandler;
import de.bwaldvogel.mongo.wire.MongoWireReplyEncoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The fake's MongoServer, set up the same way (its `bind` without TLS) but with the request
 * handler of patch 18 (AwaitData), which MongoServer does not let one replace.
 */
final class PatchedServer {
    private final PatchedBackend backend;
    private final AwaitData awaitData;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private ChannelGroup clients;
    private Channel listening;

    PatchedServer(PatchedBackend backend) {
        this.backend = backend;
        this.awaitData = new AwaitData(backend);
    }

    void bind(String host, int port) {
        boss = new NioEventLoopGroup(0, new MongoThreadFactory("mongo-server-boss"));
        workers = new NioEventLoopGroup(0, new MongoThreadFactory("mongo-server-worker"));
        clients = new DefaultChannelGroup("mongodb-channels", workers.next());
        listening = new ServerBootstrap()
            .group(boss, workers)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_BACKLOG, 100)
            .localAddress(new InetSocketAddress(host, port))
            .childOption(ChannelOption.TCP_NODELAY, Boolean.TRUE)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel channel) {
                    channel.pipeline().addLast(new MongoWireReplyEncoder());
                    channel.pipeline().addLast(new MongoWireMessageEncoder());
                    channel.pipeline().addLast(new MongoWireProtocolHandler());
                    channel.pipeline().addLast(awaitData.handler(clients));
                    channel.pipeline().addLast(new MongoExceptionHandler());
                }
            })
            .bind().syncUninterruptibly().channel();
    }

    InetSocketAddress address() {
        return (InetSocketAddress) listening.localAddress();
    }

    void shutdownNow() {
        if (listening != null) listening.close().syncUninterruptibly();
        if (clients != null) clients.close().syncUninterruptibly();
        if (boss != null) boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        if (workers != null) workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        backend.close();
    }
}
