import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signing requests to the card-issuing service with the JDK only (Java 17+), spec 5.2-5.3:
 * X-DAPI-SIGN = lowercase hex HmacSHA256(apiKey + timestamp + nonce + payload) keyed with the UTF-8
 * bytes of your secretKey; payload = the query string after "?" for GET (empty when none), the body
 * text exactly as sent for POST. Sign the exact string you send: never re-serialize the body.
 *
 *   javac -d out examples/java/DapiSigner.java
 *   java -cp out DapiSigner sdk/test-vectors/signing.json         # checks every published vector
 *   java -cp out DapiSigner call BASE_URL API_KEY SECRET_KEY       # a signed GET of your settings
 */
public class DapiSigner {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** The X-DAPI-SIGN value. */
  public static String sign(String apiKey, String secretKey, String timestamp, String nonce, String payload) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(secretKey.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return HexFormat.of().formatHex(mac.doFinal((apiKey + timestamp + nonce + payload).getBytes(StandardCharsets.UTF_8)));
  }

  /** The four headers of a request: 13-digit epoch milliseconds, a fresh nonce in [10000, 99999]. */
  public static Map<String, String> headers(String apiKey, String secretKey, String payload) throws Exception {
    String timestamp = Long.toString(System.currentTimeMillis());
    String nonce = Integer.toString(10000 + RANDOM.nextInt(90000));
    Map<String, String> h = new LinkedHashMap<>();
    h.put("X-DAPI-API-KEY", apiKey);
    h.put("X-DAPI-TIMESTAMP", timestamp);
    h.put("X-DAPI-NONCE", nonce);
    h.put("X-DAPI-SIGN", sign(apiKey, secretKey, timestamp, nonce, payload));
    return h;
  }

  /** A signed POST: the body string sent is the one signed. */
  public static HttpRequest post(String baseUrl, String path, String apiKey, String secretKey, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    headers(apiKey, secretKey, body).forEach(b::header);
    return b.build();
  }

  /** A signed GET: the query string (already percent-encoded, without "?") is sent and signed as is. */
  public static HttpRequest get(String baseUrl, String path, String query, String apiKey, String secretKey) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path + (query.isEmpty() ? "" : "?" + query))).GET();
    headers(apiKey, secretKey, query).forEach(b::header);
    return b.build();
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 4 && args[0].equals("call")) {
      HttpResponse<String> res = HttpClient.newHttpClient().send(get(args[1], "/open-api/partner/v1/settings", "", args[2], args[3]),
          HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      System.out.println(res.statusCode() + " " + res.body());
      return;
    }
    if (args.length != 1) {
      System.err.println("usage: DapiSigner <signing.json> | DapiSigner call <baseUrl> <apiKey> <secretKey>");
      System.exit(2);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> doc = (Map<String, Object>) new Json(Files.readString(Path.of(args[0]), StandardCharsets.UTF_8)).value();
    String apiKey = (String) doc.get("apiKey");
    String secretKey = (String) doc.get("secretKey");
    int failed = 0;
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> vectors = (List<Map<String, Object>>) doc.get("vectors");
    for (Map<String, Object> v : vectors) {
      String toSign = apiKey + v.get("timestamp") + v.get("nonce") + v.get("payload");
      byte[] bytes = toSign.getBytes(StandardCharsets.UTF_8);
      String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
      String signature = sign(apiKey, secretKey, (String) v.get("timestamp"), (String) v.get("nonce"), (String) v.get("payload"));
      boolean ok = toSign.equals(v.get("stringToSign")) && bytes.length == ((Number) v.get("stringToSignUtf8Length")).intValue()
          && sha.equals(v.get("stringToSignSha256")) && signature.equals(v.get("signature"));
      System.out.println((ok ? "ok   " : "FAIL ") + v.get("name") + " " + signature);
      if (!ok) failed++;
    }
    System.out.println(vectors.size() - failed + "/" + vectors.size() + " vectors match");
    if (failed > 0) System.exit(1);
  }

  /** A small JSON reader (objects, arrays, strings with escapes, numbers, true/false/null): enough for the vectors file. */
  static final class Json {
    private final String s;
    private int at;

    Json(String text) { this.s = text; }

    Object value() {
      skip();
      char c = s.charAt(at);
      if (c == '{') return object();
      if (c == '[') return array();
      if (c == '"') return string();
      if (s.startsWith("true", at)) { at += 4; return Boolean.TRUE; }
      if (s.startsWith("false", at)) { at += 5; return Boolean.FALSE; }
      if (s.startsWith("null", at)) { at += 4; return null; }
      int start = at;
      while (at < s.length() && "+-0123456789.eE".indexOf(s.charAt(at)) >= 0) at++;
      return Double.valueOf(s.substring(start, at));
    }

    private Map<String, Object> object() {
      Map<String, Object> out = new LinkedHashMap<>();
      at++;
      skip();
      if (s.charAt(at) == '}') { at++; return out; }
      while (true) {
        skip();
        String key = string();
        skip();
        expect(':');
        out.put(key, value());
        skip();
        if (s.charAt(at) == ',') { at++; continue; }
        expect('}');
        return out;
      }
    }

    private List<Object> array() {
      List<Object> out = new ArrayList<>();
      at++;
      skip();
      if (s.charAt(at) == ']') { at++; return out; }
      while (true) {
        out.add(value());
        skip();
        if (s.charAt(at) == ',') { at++; continue; }
        expect(']');
        return out;
      }
    }

    private String string() {
      expect('"');
      StringBuilder b = new StringBuilder();
      while (true) {
        char c = s.charAt(at++);
        if (c == '"') return b.toString();
        if (c != '\\') { b.append(c); continue; }
        char e = s.charAt(at++);
        switch (e) {
          case 'n' -> b.append('\n');
          case 't' -> b.append('\t');
          case 'r' -> b.append('\r');
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'u' -> { b.append((char) Integer.parseInt(s.substring(at, at + 4), 16)); at += 4; }
          default -> b.append(e);
        }
      }
    }

    private void expect(char c) {
      if (s.charAt(at) != c) throw new IllegalArgumentException("expected '" + c + "' at " + at);
      at++;
    }

    private void skip() {
      while (at < s.length() && Character.isWhitespace(s.charAt(at))) at++;
    }
  }
}
