/*
 * Starts DynamoDB Local bound to 127.0.0.1 only. DynamoDB Local has no option
 * for its listen address (`java -jar DynamoDBLocal.jar -help`: -port, -inMemory, -dbPath, ...),
 * and its Jetty server is built with `new Server(port)`, which listens on every interface: anyone
 * on the network could read and write every table. This launcher builds the server exactly as
 * DynamoDB Local's own main does (ServerRunner.createServerFromCommandLineArgs, same arguments),
 * sets the host of its connectors to the loopback address before starting it, and then starts it.
 * Run with Java's single-file source launcher (JEP 330): `java -cp DynamoDBLocal.jar <this file> ...`.
 */
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("msg.dynamodb.host", "127.0.0.1");
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector c : connectors) {
      if (!(c instanceof ServerConnector)) throw new IllegalStateException("unexpected connector " + c.getClass().getName() + ": cannot bind it to " + host);
      ((ServerConnector) c).setHost(host);
    }
    proxy.start();
    System.out.println("listening on " + host);
    proxy.join();
  }
}
