/* muonref study: the plots of the report, drawn by gnuplot run as an
 * external program (popen); the script is kept in the report as study.gp. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "study.h"
#include "core/fail.h"

/* Terminals: each plot is drawn twice, as PNG and as SVG. */
static const char *const TERMS[][2] = {
  {"pngcairo size 900,600 font 'sans,11'", "png"},
  {"svg size 900,600 dynamic font 'sans,11'", "svg"},
};

/* Line styles for one line per set: 12 distinct colours, then dash types. */
static const char *const COLOURS[] = {"#000000", "#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00",
                                      "#a65628", "#f781bf", "#666666", "#1b9e77", "#d4b000", "#00bcd4"};
#define NCOLOURS (sizeof COLOURS / sizeof COLOURS[0])

static void style(FILE *f, size_t i)
{
  fprintf(f, " lc rgb '%s' dt %zu pt %zu ps 0.6", COLOURS[i % NCOLOURS], i / NCOLOURS + 1, i % 13 + 1);
}

/* The scalar maps phi_1..phi_K of set s. */
static void map_plot(FILE *f, const mst_set *s, const char *term, const char *ext)
{
  fprintf(f, "set terminal %s\nset output 'plots/map_%s.%s'\n", term, s->name, ext);
  fprintf(f, "set title 'Scalar maps phi_k of %s (k = 1..%d)' noenhanced\n", s->name, s->default_steps);
  fprintf(f, "set xlabel 'singular value after normalisation (log scale)'\nset ylabel 'phi_k'\n");
  fprintf(f, "unset logscale\nset logscale x\nset format x '10^{%%L}'\nset format y '%%g'\nset key inside left top\n"
             "set xrange [*:*]\nset yrange [*:*]\n");
  fprintf(f, "plot 1 with lines dashtype 2 lc 'gray' title 'goal 1'");
  for (int k = 1; k <= s->default_steps; k++)
    fprintf(f, ", 'data/map_%s.dat' using 1:%d with lines lw 1.5 title 'k = %d'", s->name, k + 1, k);
  fprintf(f, "\n");
}

/* One line per set: column `col` of data/band_<set>.dat versus step. */
static void band_plot(FILE *f, const mst_set *sets, size_t n, const char *term, const char *ext, const char *file,
                      const char *title, const char *ylabel, int col, const char *yrange)
{
  fprintf(f, "set terminal %s\nset output 'plots/%s.%s'\n", term, file, ext);
  fprintf(f, "set title '%s'\nset xlabel 'step k'\nset ylabel '%s'\n", title, ylabel);
  fprintf(f, "unset logscale\nset format x '%%g'\nset logscale y\nset format y '10^{%%L}'\nset key outside right\n"
             "set xrange [0:*]\nset yrange %s\n", yrange);
  fprintf(f, "plot ");
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s'data/band_%s.dat' using 1:(abs($%d)) with linespoints", i ? ", " : "", sets[i].name, col);
    style(f, i);
    fprintf(f, " title '%s' noenhanced", sets[i].name);
  }
  fprintf(f, "\n");
}

/* One line per set on input `in`: the mean binary64 distance to the polar
 * factor (MST_PLOT_DIST) or the smallest singular value of X_k, the
 * minimum over seeds (MST_PLOT_SMIN); columns of data/mat_<set>_<in>.dat. */
static void dist_plot(FILE *f, const mst_set *sets, size_t n, const mst_input *in, mst_input_plot what,
                      const char *term, const char *ext)
{
  int smin = what == MST_PLOT_SMIN;
  fprintf(f, "set terminal %s\nset output 'plots/%s_%s.%s'\n", term, smin ? "smin" : "dist", in->name, ext);
  fprintf(f, "unset logscale\nset format x '%%g'\n");
  if (smin)
    fprintf(f, "set title 'Smallest singular value of X_k, %s (binary64, minimum over seeds)' noenhanced\n"
               "set ylabel 'smallest singular value of X_k'\nset yrange [*:2]\n", in->name);
  else
    fprintf(f, "set title 'Distance to the polar factor, %s (binary64, mean over seeds)' noenhanced\n"
               "set ylabel '||X_k - Q||_F / ||Q||_F'\nset yrange [*:10]\n", in->name);
  fprintf(f, "set xlabel 'step k'\nset logscale y\nset format y '10^{%%L}'\nset key outside right\n");
  fprintf(f, "set xrange [0:*]\nplot ");
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s'data/mat_%s_%s.dat' using 1:%d with linespoints", i ? ", " : "", sets[i].name, in->name,
            smin ? 5 : 3);
    style(f, i);
    fprintf(f, " title '%s' noenhanced", sets[i].name);
  }
  fprintf(f, "\n");
}

/* binary64 vs fp32 vs bf16 (bf16 with its min-max spread over seeds). */
static void formats_plot(FILE *f, const mst_set *s, const mst_input *in, const char *term, const char *ext)
{
  fprintf(f, "set terminal %s\nset output 'plots/formats_%s.%s'\n", term, s->name, ext);
  fprintf(f, "set title '%s on %s: binary64 vs fp32 vs bf16' noenhanced\n", s->name, in->name);
  fprintf(f, "unset logscale\nset format x '%%g'\n");
  fprintf(f, "set xlabel 'step k'\nset ylabel '||X_k - Q||_F / ||Q||_F'\nset logscale y\nset format y '10^{%%L}'\n"
             "set key inside right top\n");
  fprintf(f, "set xrange [-0.5:*]\nset yrange [*:*]\n");
  fprintf(f, "d = 'data/mat_%s_%s.dat'\n", s->name, in->name);
  fprintf(f, "plot d using 1:3 with linespoints lw 2 title 'binary64', "
             "d using 1:8 with linespoints title 'fp32 (mean)', "
             "d using 1:13:12:14 with yerrorlines title 'bf16 (mean, min-max over seeds)'\n");
}

static int write_script(const char *path, const mst_set *sets, size_t n, const mst_input *ins, size_t nin)
{
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fprintf(f, "# gnuplot script written by muonref ns --report; run it in the report directory.\n");
  fprintf(f, "set datafile commentschars '#'\nset grid\n");
  for (int t = 0; t < 2; t++) {
    const char *term = TERMS[t][0], *ext = TERMS[t][1];
    for (size_t i = 0; i < n; i++)
      map_plot(f, &sets[i], term, ext);
    band_plot(f, sets, n, term, ext, "band", "Band width max-min of phi_k over [s_min, 1] (clipped to [1e-16, 10])",
              "width", 4, "[1e-16:10]");
    band_plot(f, sets, n, term, ext, "phi_smin", "|phi_k(s_min)| versus step (clipped to [1e-4, 10])", "phi_k(s_min)",
              5, "[1e-4:10]");
    for (size_t j = 0; j < nin; j++)
      if (mst_input_plot_of(ins, j) != MST_PLOT_NONE)
        dist_plot(f, sets, n, &ins[j], mst_input_plot_of(ins, j), term, ext);
    for (size_t i = 0; i < n; i++)
      formats_plot(f, &sets[i], &ins[0], term, ext);
  }
  fprintf(f, "unset output\n");
  int bad = ferror(f);
  return fclose(f) || bad ? -1 : 0;
}

/* Appends s to b as a single-quoted shell word ('\'' for each quote). */
static void shell_quote(char *b, size_t size, const char *s)
{
  size_t n = strlen(b);
  if (n + 1 < size)
    b[n++] = '\'';
  for (; *s && n + 5 < size; s++) {
    if (*s == '\'') {
      memcpy(b + n, "'\\''", 4);
      n += 4;
    } else {
      b[n++] = *s;
    }
  }
  if (n + 1 < size)
    b[n++] = '\'';
  b[n] = '\0';
}

int mst_plot(const char *dir, const char *gnuplot, const mst_set *sets, size_t n, const mst_input *inputs,
             size_t n_inputs, muonref_error *err)
{
  char path[4096], cmd[8400] = "cd ";
  snprintf(path, sizeof path, "%s/study.gp", dir);
  if (write_script(path, sets, n, inputs, n_inputs))
    return muonref_fail(err, MUONREF_EIO, "cannot write '%s'", path);
  shell_quote(cmd, sizeof cmd - 64, dir);
  strcat(cmd, " && ");
  shell_quote(cmd, sizeof cmd - 64, gnuplot);
  strcat(cmd, " study.gp 2>&1");
  FILE *p = popen(cmd, "r");
  if (!p)
    return muonref_fail(err, MUONREF_EIO, "cannot run gnuplot '%s': %s", gnuplot, strerror(errno));
  char line[512], first[512] = "";
  while (fgets(line, sizeof line, p))
    if (!first[0])
      snprintf(first, sizeof first, "%s", line);
  int st = pclose(p);
  if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    first[strcspn(first, "\n")] = '\0';
    return muonref_fail(err, MUONREF_EIO, "gnuplot '%s' failed on %s (status %d): %s", gnuplot, path,
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1, first);
  }
  return MUONREF_OK;
}
