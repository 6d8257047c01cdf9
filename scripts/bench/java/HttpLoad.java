import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A service under load, for profiling benchmarks: the JDK's own HTTP server
 * (com.sun.net.httpserver) answering requests that parse a query, build a JSON-like body from a
 * map, and hash it, while client threads of the JDK's HttpClient keep it busy. Steady state: the
 * same handful of call paths over and over, as a server profile has.
 *
 * <p>java HttpLoad SECONDS [CLIENTS]
 */
public final class HttpLoad {
  private static final AtomicLong served = new AtomicLong();

  public static void main(String[] args) throws Exception {
    final long seconds = Long.parseLong(args[0]);
    final int clients = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
    server.setExecutor(Executors.newFixedThreadPool(2));
    server.createContext("/item", HttpLoad::handle);
    server.start();
    final int port = server.getAddress().getPort();
    final long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      final int id = c;
      Thread t = new Thread(() -> load(port, id, deadline), "client-" + c);
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) t.join();
    server.stop(0);
    System.out.println("served " + served.get());
    System.exit(0);
  }

  private static void load(int port, int id, long deadline) {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    long n = 0;
    while (System.nanoTime() < deadline) {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/item?id=" + (n++ % 1000) + "&client=" + id))
              .build();
      try {
        client.send(request, HttpResponse.BodyHandlers.ofString());
      } catch (IOException | InterruptedException e) {
        return;
      }
    }
  }

  private static void handle(HttpExchange exchange) throws IOException {
    try (InputStream in = exchange.getRequestBody()) {
      in.readAllBytes();
    }
    Map<String, String> query = parse(exchange.getRequestURI().getRawQuery());
    StringBuilder body = new StringBuilder("{");
    for (int i = 0; i < 40; i++) {
      body.append('"').append("field").append(i).append("\":\"").append(query.getOrDefault("id", "?")).append(i * 31)
          .append("\",");
    }
    body.append("\"digest\":\"").append(digest(body.toString())).append("\"}");
    byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(200, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
    served.incrementAndGet();
  }

  private static Map<String, String> parse(String query) {
    Map<String, String> out = new HashMap<>();
    if (query == null) return out;
    for (String pair : query.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) out.put(pair.substring(0, eq), pair.substring(eq + 1));
    }
    return out;
  }

  private static String digest(String text) {
    try {
      byte[] hash = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder();
      for (byte b : hash) hex.append(String.format("%02x", b));
      return hex.toString();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
