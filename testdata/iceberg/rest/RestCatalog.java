// RestCatalog serves an Apache Iceberg REST catalog on a loopback address
// for tests: the Iceberg project's own REST test fixture (RESTCatalogAdapter
// and RESTCatalogServlet, the server of the apache/iceberg-rest-fixture
// image) over a JDBC catalog in a SQLite file, with a local warehouse. The
// fixture's own main binds every interface; this one binds only HOST.
//
// usage: java -cp "$(cat CLASSPATH_FILE)" RestCatalog.java HOST PORT WAREHOUSE CATALOG_DB
//
// It prints "LISTENING <port>" once it serves (PORT 0 picks one) and runs
// until it is killed.
import java.util.Map;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

public class RestCatalog {
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: RestCatalog HOST PORT WAREHOUSE CATALOG_DB");
      System.exit(2);
    }
    Map<String, String> props = Map.of(
        "catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog",
        "uri", "jdbc:sqlite:" + args[3],
        "jdbc.schema-version", "V1",
        "warehouse", args[2]);
    Catalog backend = CatalogUtil.buildIcebergCatalog("rest_backend", props, new org.apache.hadoop.conf.Configuration());
    ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    handler.setContextPath("/");
    handler.addServlet(new ServletHolder(new RESTCatalogServlet(new RESTCatalogAdapter(backend))), "/*");
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(args[0]);
    connector.setPort(Integer.parseInt(args[1]));
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
    System.out.println("LISTENING " + connector.getLocalPort());
    System.out.flush();
    server.join();
  }
}
